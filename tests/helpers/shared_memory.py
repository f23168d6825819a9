"""The processes engine's shared-memory blocks as the tests see them: each test module makes its blocks in a
private directory (`CORTEX_SHM_DIR`) and counts only those, never the machine's `/dev/shm`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from cortex.runtime.engines.processes.blocks import PREFIX, SHM_DIR_VARIABLE


def shared_blocks(directory: str | None = None) -> set[str]:
    """The blocks of `directory` (default: this process's `CORTEX_SHM_DIR`) that exist now: those with a name
    there, and those this process holds open (on Linux a block is unlinked once open: its descriptor is what
    keeps it)."""
    directory = os.path.realpath(directory or os.environ[SHM_DIR_VARIABLE])
    names = {n for n in os.listdir(directory) if n.startswith(PREFIX)}
    for fd in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith(os.path.join(directory, PREFIX)):
            names.add(os.path.basename(target).removesuffix(" (deleted)"))
    return names


@pytest.fixture(scope="module", name="private_shm")
def private_shm_fixture() -> Iterator[str]:
    """A private directory under /dev/shm (a tmpfs where there is one) for the module's blocks."""
    parent = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="cortex-test-", dir=parent) as directory, pytest.MonkeyPatch.context() as env:
        env.setenv(SHM_DIR_VARIABLE, directory)
        yield directory
