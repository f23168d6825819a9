"""Shared test support, not test modules: tolerances, builders, fixtures used by several test files.

No test module imports another; what two of them share lives here. `tests/conftest.py` sits in
`tests/`, so pytest puts `tests/` on `sys.path` under plain `pytest` and `python -m pytest`
alike: test modules import these as `from helpers.NAME import ...`.
"""
