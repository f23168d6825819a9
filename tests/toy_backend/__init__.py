"""A toy backend, added the way CONTRIBUTING.md's "Adding a backend" says: this folder (its record and
its producer), a loader (`loader.py`, which imports nothing of the compiler), and one row in each table
(`cortex.backends.backend.BACKENDS`, `cortex.runtime.executables.KINDS`; tests/test_toy_backend.py adds them).

Its executables are one self-contained Python text (the NumPy emitter's code with its constants
embedded), a different payload from the "numpy" kind's, loaded by its own loader. It runs no
post-lowering passes and records BLAS use as the emitter found it.
"""

from __future__ import annotations

from cortex.backends.record import Backend

BACKEND = Backend(
    "toy", ("cpu",), ("toy_backend.producer", "toy_executable"), kind="toy",
    post_lowering=None,  # `post_passes="default"` runs nothing for it
)
