"""The processes engine's shared-memory blocks as the tests see them (POSIX shared memory under /dev/shm)."""

from __future__ import annotations

import os


def shared_blocks() -> set[str]:
    """The names of the shared-memory blocks that exist now (Python's `psm_` prefix); empty without /dev/shm."""
    return {n for n in os.listdir("/dev/shm") if n.startswith("psm_")} if os.path.isdir("/dev/shm") else set()
