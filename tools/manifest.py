"""A batch's records (`cortex-run --out-dir DIR`): folder names, DIR/manifest.jsonl, and the locks around both.

The manifest has one JSON object per line, one per video, and is the registry of the folders the batch
owns: a folder is never handed to a second video, in this batch or any later one. Every change to it is
made under an exclusive `fcntl.flock` on `DIR/.manifest.lock`: read the file, merge the change, replace the
file atomically (`write_bytes_atomic`), so two batches writing into one DIR lose no line. A video being
run also holds a lock of its own (`DIR/.running-<folder>.lock`), as long as its process lives: a
`running` entry whose lock is free was left by a batch that was killed, and the next batch runs the video
again; one whose lock is held is being run by another batch, which this one leaves alone.

A line that is not UTF-8, not JSON, or not a record (no path, a folder that is not a plain name, an unknown
status) is reported once, as a warning naming the line, and dropped when the manifest is next written: its
video runs again, and its folder (still on disk) is not handed to another video.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cortex.errors import CortexError
from cortex.tools.atomic import write_bytes_atomic

MANIFEST = "manifest.jsonl"
LOCK = ".manifest.lock"
RUNNING = ".running-{folder}.lock"
"""DIR's files the batch itself makes (every folder in DIR is a video's); no video's folder may take these
names, nor begin with a dot."""
RESERVED = frozenset(name.casefold() for name in (MANIFEST, LOCK))

STATUSES = ("running", "done", "done-with-warnings", "failed")
"""`running`: the run started and has not been recorded since (a live batch's, or an interrupted one's);
`done`: every output written and every frame of the clip decoded, with no warning; `done-with-warnings`:
every output written, but the source warned (a truncated or damaged file, frames that failed to decode,
fewer frames than the container declares); `failed`: no complete outputs (the error says why)."""
FINISHED = ("done", "done-with-warnings")

MAX_NAME_BYTES = 120
"""A folder name's longest UTF-8 form, well inside every file system's 255-byte name limit (`-N` may follow)."""

NAME_PUNCTUATION = frozenset("-_.+@=,")


def folder_stem(name: str | None) -> str:
    """A video's folder name before de-duplication: the file's name less its last suffix, with every
    character that is not a letter, a digit or one of `-_.+@=,` made `_`, leading and trailing dots
    dropped (never `.`, `..` or a hidden name), at most MAX_NAME_BYTES, and `video` when nothing is left."""
    if name is None:
        return "synthetic"
    base = name.replace("\\", "/").rstrip("/").rpartition("/")[2]
    head, dot, _ = base.rpartition(".")
    stem = head if dot and head.strip(".") else base
    stem = unicodedata.normalize("NFC", stem)
    stem = "".join(c if c.isalnum() or c in NAME_PUNCTUATION else "_" for c in stem).strip(".")
    while len(stem.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        stem = stem[:-1].rstrip(".")
    return stem or "video"


def is_folder_name(name: object) -> bool:
    """What a manifest may name as a video's folder: a plain, visible name in DIR (not `.`, `..`, reserved)."""
    return (isinstance(name, str) and bool(name) and not name.startswith(".") and "/" not in name
            and "\\" not in name and "\0" not in name and name.casefold() not in RESERVED)


def unique_folder(stem: str, taken: set[str], out: Path) -> str:
    """`stem`, or `stem-2`, `stem-3` ...: the first not `taken` (casefolded), not reserved, not already in `out`."""
    candidate, n = stem, 1
    while candidate.casefold() in taken or candidate.casefold() in RESERVED or os.path.lexists(out / candidate):
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def warn(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


class Manifest:
    """DIR/manifest.jsonl: `with manifest.locked() as entries:` reads it under the lock, and writes back what
    the block left in `entries` ({video's path: record}, in file order) before the lock is released."""

    def __init__(self, out: Path):
        self.out = out
        self.path = out / MANIFEST
        self.reported: set[tuple[int, bytes]] = set()
        self.held: dict[str, int] = {}  # folder -> descriptor of its running lock, while this process runs it

    @contextlib.contextmanager
    def locked(self) -> Iterator[dict[str, dict[str, Any]]]:
        fd = os.open(self.out / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            entries = self.read()
            yield entries
            write_bytes_atomic(self.path, b"".join(
                json.dumps(e, sort_keys=True).encode() + b"\n" for e in entries.values()))
        finally:
            os.close(fd)  # releases the lock

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise CortexError(f"cannot read {self.path}: {e.strerror or e}") from None
        entries: dict[str, dict[str, Any]] = {}
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            problem, entry = parse_line(raw)
            if problem is None:
                entries[entry["path"]] = entry
            elif (number, raw) not in self.reported:
                self.reported.add((number, raw))
                warn(f"{self.path} line {number}: {problem}; skipped (that video runs again)")
        return entries

    def hold(self, folder: str) -> bool:
        """Take `folder`'s running lock (kept until `release`); False when another process holds it."""
        if folder in self.held:
            return True
        fd = os.open(self.out / RUNNING.format(folder=folder), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.held[folder] = fd
        return True

    def release(self, folder: str) -> None:
        fd = self.held.pop(folder, None)
        if fd is not None:
            os.close(fd)

    def release_all(self) -> None:
        for folder in list(self.held):
            self.release(folder)


def parse_line(raw: bytes) -> tuple[str | None, dict[str, Any]]:
    """(None, the record) for a good manifest line, else (what is wrong with it, {})."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})", {}
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not JSON ({e.msg} at column {e.colno})", {}
    except RecursionError:
        return "not JSON (nested too deeply)", {}
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return "not a video's record (no \"path\")", {}
    if not is_folder_name(entry.get("folder")):
        return f"the folder {str(entry.get('folder'))[:80]!r} is not a plain name inside the batch's folder", {}
    if entry.get("status") not in STATUSES:
        return f"unknown status {str(entry.get('status'))[:40]!r}", {}
    return None, entry


__all__ = ["FINISHED", "MANIFEST", "STATUSES", "Manifest", "folder_stem", "is_folder_name", "unique_folder"]
