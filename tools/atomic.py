"""Outputs that are whole or absent, and that never destroy what the path names.

A regular file is written to a temporary sibling and renamed onto its
target: a failed write (a full disk, a vanished directory) raises
`OutputError`, one line naming the file the user asked for, and leaves
neither a half-written target nor the temporary file behind. `os.replace`
is atomic within one filesystem, which the temporary file shares with its
target. No fsync: this guards against a failed process or a full disk, not
against power loss.

What the rename must not do: replace something that is
not a regular file. So the target is looked at first (`Destination`):

- a symlink is followed: its target is replaced, the link stays a link;
- an existing device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named
  pipe) is written into directly, as a shell's `>` would: no temporary file,
  no rename, and no atomicity to promise (a stream has no "whole or absent");
- a directory is refused.

A new file gets the user's umask (0666 & ~umask, as `>` would), a replaced
file keeps its mode: the temporary file mkstemp makes is 0600 and would
otherwise hand that mode on.

Per-frame files (a folder of PNGs or JPEGs) go through `FrameFolder`: the
folder is opened once and every file is made and renamed relative to it,
so a symlink planted in the folder is refused, never followed out of it.

Every temporary file is named `.NAME.partial-PID-XXXX`; `remove_temporaries`
deletes this process's ones in every folder one was made in, so an
interrupted or terminated run (`install_signal_handlers`) leaves none.

`check_distinct` refuses an output that is one of the run's inputs or
another output -- the same file by device and inode, not by spelling -- since
the rename would otherwise replace the user's video with our output.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Collection, Iterable
from pathlib import Path

from cortex.errors import CortexError


class OutputError(CortexError):
    """An output file could not be written (cortex-run exits non-zero with this line)."""


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


_FOLDERS: set[str] = set()
"""Folders this process has made temporary files in (added before a file is made)."""
_FOLDERS_LOCK = threading.Lock()


def partial_prefix(stem: str) -> str:
    return f".{stem}.partial-{os.getpid()}-"


def note_folder(folder: str | os.PathLike) -> None:
    with _FOLDERS_LOCK:
        _FOLDERS.add(os.fspath(folder))


def remove_temporaries() -> None:
    """Delete this process's temporary files (`.NAME.partial-PID-*`) in every folder it made one in."""
    marker = f".partial-{os.getpid()}-"
    with _FOLDERS_LOCK:
        folders = list(_FOLDERS)
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(".") and marker in name:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


class Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds like KeyboardInterrupt; exit with `code` (128 + the signal)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.code = 128 + signum


def _raise_signalled(signum: int, _frame: object) -> None:
    raise Signalled(signum)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP raise `Signalled` (SIGINT already raises KeyboardInterrupt), so the run
    unwinds through its cleanup instead of dying with its temporary files on disk. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _raise_signalled)


def current_umask() -> int:
    """The process's umask, read without changing it where /proc says it (Linux), else set and restored."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def mode_for(existing: os.stat_result | None) -> int:
    """An existing regular file's permission bits, or what a new file gets under the umask."""
    if existing is not None and stat.S_ISREG(existing.st_mode):
        return stat.S_IMODE(existing.st_mode)
    return 0o666 & ~current_umask()


class Destination:
    """Where the bytes for `target` go: `path` (symlinks followed) and whether it is a stream.

    `stream` is True for an existing file that is not a regular file (a
    device, a FIFO, a socket): it is opened and written, never renamed onto.
    """

    def __init__(self, target: str | os.PathLike):
        self.target = Path(target)
        try:
            info = os.stat(self.target)  # follows symlinks
        except FileNotFoundError:
            info = None
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise OutputError(f"cannot write {self.target}: it is a directory")
        self.stream = info is not None and not stat.S_ISREG(info.st_mode)
        self.mode = mode_for(info)
        # A stream is opened by the name given (/dev/stdout is a link the kernel resolves per process);
        # a regular file by its real path, so the rename replaces the link's target, not the link.
        self.path = self.target if self.stream else Path(os.path.realpath(self.target))

    def temporary(self, create: bool = True) -> Path:
        """A new hidden file beside the real target (or in the temp folder for a stream), suffix kept.

        OpenCV picks a video container by suffix, so the suffix is the target's.
        """
        directory = Path(tempfile.gettempdir()) if self.stream else self.path.parent
        note_folder(directory)
        try:
            fd, name = tempfile.mkstemp(prefix=partial_prefix(self.path.stem), suffix=self.path.suffix, dir=directory)
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None
        try:
            os.fchmod(fd, self.mode)
        except OSError as e:
            os.close(fd)
            remove_quietly(Path(name))
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None
        os.close(fd)
        return Path(name)

    def open_stream(self) -> int:
        try:
            return os.open(self.path, os.O_WRONLY | os.O_NOCTTY)
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {describe(e)}") from None


def temporary_path(target: str | os.PathLike) -> Path:
    """A new temporary file for whoever writes `target` by name (cv2.VideoWriter); see `commit_file`."""
    return Destination(target).temporary()


class AtomicFile:
    """A file written piecewise into a temporary sibling and renamed onto `target` by `commit()`.

        out = AtomicFile(path); out.write(b"..."); out.commit()   # or out.discard()

    Into a device or FIFO the writes go straight through (see the module's docstring).
    """

    def __init__(self, target: str | os.PathLike):
        self.destination = Destination(target)
        self.target = self.destination.target
        self.temporary: Path | None = None
        if self.destination.stream:
            self.fd: int | None = self.destination.open_stream()
            return
        self.temporary = self.destination.temporary()
        try:
            self.fd = os.open(self.temporary, os.O_WRONLY | os.O_TRUNC)
        except OSError as e:
            remove_quietly(self.temporary)
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
            if self.temporary is not None:
                os.replace(self.temporary, self.destination.path)
        except OSError as e:
            if self.temporary is not None:
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
        if self.temporary is not None:
            remove_quietly(self.temporary)


def write_bytes_atomic(target: str | os.PathLike, data: bytes | memoryview) -> None:
    """`target` holds `data` afterwards, or an OutputError is raised and `target` is untouched."""
    out = AtomicFile(target)
    try:
        out.write(bytes(data) if isinstance(data, memoryview) else data)
        out.commit()
    except BaseException:  # an interrupt between the two: no temporary file left behind
        out.discard()
        raise


class FrameFolder:
    """A folder of per-frame files, written relative to a descriptor of the folder opened once.

    A name in it that is a symlink is refused (the link could point out of
    the folder: its target would be replaced); the temporary file is made
    with O_EXCL|O_NOFOLLOW and renamed onto the name, which replaces the
    directory entry itself, never what a link there points to.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise OutputError(f"cannot write {self.path}: {describe(e)}") from None
        note_folder(os.path.realpath(self.path))

    def existing(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise OutputError(f"cannot write {self.path / name}: {describe(e)}") from None

    def write(self, name: str, data: bytes, protected: Collection[tuple] = ()) -> None:
        """`name` in the folder holds `data` afterwards (whole), or an OutputError names the file."""
        target = self.path / name
        info = self.existing(name)
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                raise OutputError(f"cannot write {target}: it is a symbolic link; refusing to follow it out of {self.path}")
            if stat.S_ISDIR(info.st_mode):
                raise OutputError(f"cannot write {target}: it is a directory")
            if not stat.S_ISREG(info.st_mode):  # a device or FIFO: written into, as the module's docstring says
                self.write_into(name, data)
                return
            if (info.st_dev, info.st_ino) in protected:
                raise OutputError(f"cannot write {target}: it is an input of this run; refusing to overwrite it")
        stem = name.rsplit(".", 1)[0]
        temporary = f"{partial_prefix(stem)}{secrets.token_hex(4)}.{name.rsplit('.', 1)[-1]}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(temporary, flags, 0o666, dir_fd=self.fd)  # the umask applies, as for any new file
        except OSError as e:
            raise OutputError(f"cannot write {target}: {describe(e)}") from None
        try:
            try:
                if info is not None:
                    os.fchmod(fd, stat.S_IMODE(info.st_mode))
                write_all(fd, data)
            finally:
                os.close(fd)
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            if isinstance(e, OSError):
                raise OutputError(f"cannot write {target}: {describe(e)}") from None
            raise

    def write_into(self, name: str, data: bytes) -> None:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_NOCTTY | os.O_NOFOLLOW, dir_fd=self.fd)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
        except OSError as e:
            raise OutputError(f"cannot write {self.path / name}: {describe(e)}") from None

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)


def commit_file(temporary: Path, target: str | os.PathLike) -> None:
    """Put a finished temporary file (written by someone else, e.g. cv2.VideoWriter) in `target`'s place.

    Renamed onto a regular target (through symlinks); copied into a device or FIFO.
    """
    destination = Destination(target)
    try:
        if destination.stream:
            fd = destination.open_stream()
            try:
                with open(temporary, "rb") as source:
                    while chunk := source.read(1 << 20):
                        write_all(fd, chunk)
            finally:
                os.close(fd)
            remove_quietly(temporary)
        else:
            os.replace(temporary, destination.path)
    except OSError as e:
        remove_quietly(temporary)
        raise OutputError(f"cannot write {destination.target}: {describe(e)}") from None


WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""errno values that mean "the bytes did not get written" (a full disk, /dev/full, a quota)."""


def is_write_failure(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno in WRITE_FAILURES


def detach_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again (or print a traceback).

    Called once standard output has failed (a full disk, a reader gone) and the
    tool is about to exit with its own one-line error.
    """
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def identity(path: str | os.PathLike) -> tuple:
    """What makes two spellings one file: (device, inode), or for a file not there yet its folder's and its name."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
        return (info.st_dev, info.st_ino)
    except OSError:
        pass
    try:
        folder = os.stat(os.path.dirname(real) or ".")
        return (folder.st_dev, folder.st_ino, os.path.basename(real))
    except OSError:
        return (real,)


def is_character_device(path: str | os.PathLike) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether `path` names something in `folder` or below it (links resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real != top and os.path.commonpath([real, top]) == top


def check_distinct(outputs: Iterable[tuple[str, str | os.PathLike | None]],
                   inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
                   folders: Collection[str] = ()) -> None:
    """Refuse an output that is an input, or the same file as another output (by inode, not spelling),
    or that lies inside the folder of an output named in `folders` (the run writes that folder's files).

    Each entry is (what to call it in the message, e.g. "--overlay", path or None when not given).
    A character device (/dev/null) may take several outputs: nothing there is destroyed.
    """
    named: list[tuple[str, str | os.PathLike]] = [(name, path) for name, path in outputs if path]
    for folder_name, folder in named:
        if folder_name not in folders:
            continue
        for name, path in named:
            if name != folder_name and inside(path, folder):
                raise OutputError(
                    f"{name} {path} is inside {folder_name} {folder}, whose files this run writes: "
                    "give it a path outside that folder"
                )
    given_inputs = [(name, path) for name, path in inputs if path]
    seen: dict[tuple, tuple[str, str | os.PathLike]] = {}
    for name, path in named:
        key = identity(path)
        for input_name, input_path in given_inputs:
            if identity(input_path) == key:
                raise OutputError(
                    f"{name} {path} is the same file as {input_name} {input_path}: refusing to overwrite an input"
                )
        if key in seen and not is_character_device(path):
            other_name, other_path = seen[key]
            raise OutputError(f"{name} {path} and {other_name} {other_path} are the same file: give each output its own")
        seen[key] = (name, path)


__all__ = [
    "AtomicFile",
    "Destination",
    "FrameFolder",
    "Signalled",
    "OutputError",
    "WRITE_FAILURES",
    "check_distinct",
    "detach_stdout",
    "is_write_failure",
    "commit_file",
    "install_signal_handlers",
    "remove_quietly",
    "remove_temporaries",
    "temporary_path",
    "write_bytes_atomic",
]
