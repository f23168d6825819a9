"""Builders and checks several test modules share (no test module imports another).

`tests/conftest.py` sits in `tests/`, so pytest puts `tests/` on `sys.path`
under plain `pytest` and `python -m pytest` alike: test modules import
these as `from helpers.NAME import ...`.
"""
