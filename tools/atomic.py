"""Outputs that are whole or absent: write to a temporary file beside the target, then rename.

A failed write (a full disk, a vanished directory) raises `OutputError`,
one line naming the file the user asked for, and leaves neither a
half-written target nor the temporary file behind. `os.replace` is atomic
within one filesystem, which the temporary file shares with its target.
No fsync: this guards against a failed process or a full disk, not against
power loss.
"""

from __future__ import annotations

import os
from pathlib import Path

from cortex.errors import CortexError


class OutputError(CortexError):
    """An output file could not be written (cortex-run exits non-zero with this line)."""


def temporary_path(target: Path) -> Path:
    """A hidden sibling of `target` with its suffix kept (OpenCV picks a container by suffix)."""
    return target.with_name(f".{target.stem}.partial-{os.getpid()}{target.suffix}")


def describe(error: OSError) -> str:
    return error.strerror or str(error)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """os.write until every byte is out (a short write is not an error by itself)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


class AtomicFile:
    """A file written piecewise into a temporary sibling and renamed onto `target` by `commit()`.

        out = AtomicFile(path); out.write(b"..."); out.commit()   # or out.discard()
    """

    def __init__(self, target: str | os.PathLike):
        self.target = Path(target)
        self.temporary = temporary_path(self.target)
        try:
            self.fd: int | None = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None

    def write(self, data: bytes | str) -> None:
        if self.fd is None:
            raise OutputError(f"{self.target}: written after it was closed")
        try:
            write_all(self.fd, data.encode() if isinstance(data, str) else data)
        except OSError as e:
            self.discard()
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None

    def commit(self) -> None:
        """Close and rename onto the target: the target appears complete, or not at all."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            os.close(fd)
            os.replace(self.temporary, self.target)
        except OSError as e:
            remove_quietly(self.temporary)
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None

    def discard(self) -> None:
        """Close and remove the temporary file; the target is left as it was."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.close(fd)
            except OSError:
                pass
        remove_quietly(self.temporary)


def write_bytes_atomic(target: str | os.PathLike, data: bytes | memoryview) -> None:
    """`target` holds `data` afterwards, or an OutputError is raised and `target` is untouched."""
    out = AtomicFile(target)
    out.write(bytes(data) if isinstance(data, memoryview) else data)
    out.commit()


def commit_file(temporary: Path, target: Path) -> None:
    """Rename a finished temporary file (written by someone else, e.g. cv2.VideoWriter) onto `target`."""
    try:
        os.replace(temporary, target)
    except OSError as e:
        remove_quietly(temporary)
        raise OutputError(f"cannot write {target}: {describe(e)}") from None


__all__ = ["AtomicFile", "OutputError", "commit_file", "remove_quietly", "temporary_path", "write_bytes_atomic"]
