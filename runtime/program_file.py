"""The program file's envelope: the file read and written safely, the zip archive, and program.json's
format, version, digest and signature — checked before any field is trusted.

`cortex.runtime.program` says what the fields of program.json mean and builds the `Program`; this module
only moves bytes and guards them. A program file is code (a "numpy" executable is Python source that
loading runs): load only files you trust, or sign them. Saved with a key (`key=` or `CORTEX_PROGRAM_KEY`),
a file loads with that key only if its HMAC-SHA256 matches. The digests catch damage, not an edit (anyone
can recompute a SHA-256): program.json's own digest is checked before any field is read. A file of another
format or version, an archive that inflates beyond `MAX_PROGRAM_BYTES`, a path that is not a regular file:
each is a one-line CortexError. Saving writes a temporary sibling and renames it over the path, so a
failed save leaves the old file whole.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import re
import stat
import tempfile
import zipfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from cortex.errors import CortexError

FORMAT = "cortex-program"
VERSION = 3
"""Bumped whenever a field changes meaning; a runtime reads its own version only (1: no document digest,
member digests optional; 2: one mode per program, no `modes`)."""

KEY_VARIABLE = "CORTEX_PROGRAM_KEY"
"""The environment variable holding the key that signs saved programs and checks loaded ones (`key=` overrides it)."""

MAX_PROGRAM_BYTES = 1 << 32
"""The most a program may inflate to: program.json plus every member it references, counted once per
reference (two members naming one entry read it twice), and the archive's entries together. A zip that
claims more is refused before a member is read, instead of filling memory (the L2 pipeline's program is
~100 kB, a CNN's some MB). The file itself may be no larger."""

SHA256 = re.compile(r"^[0-9a-f]{64}$")
"""How a digest is written: 64 lowercase hex digits."""


def one_line(error: object, limit: int) -> str:
    return " ".join(str(error).split())[:limit]


def program_path(path: object, verb: str) -> Path:
    """`path` as a Path, or a one-line CortexError for what no file system takes (not a path; a NUL byte)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise CortexError(f"{verb} takes a path (str or pathlib.Path), got {type(path).__name__}")
    text = os.fsdecode(path)
    if "\0" in text:
        raise CortexError(f"cannot {verb} program {text!r}: a path cannot hold a NUL byte")
    return Path(text)


def read_file(path: Path) -> bytes:
    """The file's bytes; anything but a regular file (a FIFO would block, a device never end) is refused
    before it is read: opened without blocking, then checked on the open descriptor (no race)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise CortexError(f"cannot read program '{path}': {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else \
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a socket"
            raise CortexError(f"cannot read program '{path}': it is {what}, not a regular file")
        if info.st_size > MAX_PROGRAM_BYTES:
            raise CortexError(f"cannot read program '{path}': the file is too large ({info.st_size} bytes, at most {MAX_PROGRAM_BYTES})")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read()  # a regular file no larger than the cap (read(n) would reserve n bytes first)
        if len(data) > MAX_PROGRAM_BYTES:
            raise CortexError(f"cannot read program '{path}': the file is too large (it grew while it was read)")
        return data
    except OSError as e:
        raise CortexError(f"cannot read program '{path}': {e.strerror or e}") from None
    finally:
        os.close(fd)


def key_of(key: str | bytes | None) -> bytes | None:
    """The signing key: `key`, else the environment's `CORTEX_PROGRAM_KEY` (its bytes, read through
    `os.environb` where there is one), else none (an empty variable is none, an empty `key=` an error)."""
    where = "key="
    if key is None:
        where = KEY_VARIABLE
        environb = getattr(os, "environb", None)
        key = (environb.get(KEY_VARIABLE.encode()) if environb is not None else os.environ.get(KEY_VARIABLE)) or None
        if key is None:
            return None
    if not isinstance(key, (str, bytes)):
        raise CortexError(f"a program key is text or bytes, got {type(key).__name__}")
    if not key:
        raise CortexError(f"the program key is empty ({where}{key!r}): give a non-empty key, or key=None for none")
    try:
        if isinstance(key, str):
            return key.encode("utf-8")
        if where == KEY_VARIABLE:
            key.decode("utf-8")
        return key
    except (UnicodeEncodeError, UnicodeDecodeError) as e:
        what = f"byte 0x{key[e.start]:02x}" if isinstance(key, bytes) else f"U+{ord(key[e.start]):04X}"
        raise CortexError(f"{where} is not UTF-8 text ({what} at offset {e.start}): set it to UTF-8 text, "
                          "or pass key= as bytes") from None


def _canonical(doc: dict[str, Any]) -> bytes:
    """program.json's content, less its digest and signature, as one canonical text (what both cover)."""
    body = {k: v for k, v in doc.items() if k not in ("sha256", "hmac_sha256")}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def document_digest(doc: dict[str, Any]) -> str:
    """The SHA-256 of program.json's canonical content (`sha256` in the file)."""
    return hashlib.sha256(_canonical(doc)).hexdigest()


def _signature(doc: dict[str, Any], key: bytes) -> str:
    return hmac.new(key, _canonical(doc), hashlib.sha256).hexdigest()


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique (two readers of one with a key twice may disagree on its value)."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise CortexError(f"program.json names '{str(twice)[:60]}' twice in one object")
    return doc

def write_file(path: Path, data: bytes) -> Path:
    """Write `data` to `path` atomically: a temporary sibling, flushed to disk, renamed over `path` (a full
    disk or a crash leaves the old file whole)."""
    if path.is_dir():
        raise CortexError(f"cannot save program to '{path}': it is a directory")
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise CortexError(f"cannot save program to '{path}': {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fchmod(file.fileno(), mode)
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as e:
        with suppress(OSError):
            os.unlink(temporary)
        raise CortexError(f"cannot save program to '{path}': {e.strerror or e}") from None
    with suppress(OSError):  # the rename itself survives a crash once the folder is on disk
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return path


def archive_bytes(doc: dict[str, Any], files: dict[str, bytes], key: bytes | None) -> bytes:
    """The archive of program.json (`doc`, given its digest and, with a key, its signature) and `files`."""
    doc["sha256"] = document_digest(doc)
    if key is not None:
        doc["hmac_sha256"] = _signature(doc, key)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("program.json", json.dumps(doc, indent=1, sort_keys=True))
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def open_document(data: bytes, key: bytes | None) -> tuple[dict[str, Any], zipfile.ZipFile]:
    """The archive and its program.json, once the archive's size, the document's format, version, digest and
    (with a key) signature are checked; the caller closes the archive."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 - zipfile raises many kinds on crafted headers
        raise CortexError(f"not a cortex program (not a zip archive: {one_line(e, 120)})") from None
    try:
        return _document(archive, key), archive
    except BaseException:
        archive.close()
        raise


def _document(archive: zipfile.ZipFile, key: bytes | None) -> dict[str, Any]:
    entries = archive.infolist()
    names = [info.filename for info in entries]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise CortexError(f"the archive holds '{twice[:80]}' twice")
    inflated = sum(info.file_size for info in entries)
    if inflated > MAX_PROGRAM_BYTES:
        raise CortexError(f"the archive is too large ({inflated} bytes inflated, at most {MAX_PROGRAM_BYTES})")
    try:
        text = read_member(archive, "program.json")
    except KeyError:
        raise CortexError("not a cortex program (no program.json)") from None
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise CortexError("program.json is not a cortex program's (nested too deeply)") from None
    except ValueError as e:
        raise CortexError(f"program.json is not JSON: {one_line(e, 200)}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else None
        raise CortexError(f"not a cortex program (format {str(got)[:60]!r}, expected '{FORMAT}')")
    version = doc.get("version")
    if type(version) is not int or version != VERSION:
        hint = "saved by an older Cortex; recompile the pipeline" if type(version) is int and version < VERSION \
            else "saved by a newer Cortex" if type(version) is int else "not a version number"
        raise CortexError(f"cortex program format version {repr(version)[:40]}; this runtime reads version {VERSION} ({hint})")
    _check_document(doc, key)
    return doc


def _check_document(doc: dict[str, Any], key: bytes | None) -> None:
    """program.json's digest (always) and signature (when loading with a key): nothing else is read before."""
    digest = doc.get("sha256")
    if not isinstance(digest, str) or not SHA256.match(digest):
        raise CortexError("program.json carries no SHA-256 of its content: refused (a digest is mandatory)")
    if not hmac.compare_digest(digest, document_digest(doc)):
        raise CortexError("program.json does not match its SHA-256 (changed or damaged after it was saved)")
    if key is None:
        return
    signature = doc.get("hmac_sha256")
    if not isinstance(signature, str):
        raise CortexError(f"the program is not signed, and a key was given (`key=` or {KEY_VARIABLE}): refused")
    if not hmac.compare_digest(signature, _signature(doc, key)):
        raise CortexError("the program's signature does not match the key: refused")


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes; a damaged one (bad CRC, bad deflate data, encrypted) is a CortexError. KeyError: no
    such member."""
    info = archive.getinfo(name)
    if info.flag_bits & 0x1:
        raise CortexError(f"member '{name[:80]}' is encrypted")
    try:
        return archive.read(info)
    except Exception as e:  # noqa: BLE001 - zipfile and its decompressors raise many kinds on bad data
        raise CortexError(f"member '{name[:80]}' is damaged ({type(e).__name__}: {one_line(e, 120)})") from None


__all__ = ["FORMAT", "KEY_VARIABLE", "MAX_PROGRAM_BYTES", "SHA256", "VERSION", "archive_bytes", "document_digest", "key_of", "one_line",
           "open_document", "program_path", "read_file", "read_member", "write_file"]
