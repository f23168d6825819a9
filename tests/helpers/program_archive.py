"""Editing a saved program archive the way anyone can: unzip, change program.json or members, rewrite the digest, rezip.

program.json's `sha256` catches damage, not an edit, so the tests that check the fields behind it (old formats,
tampering, integrity) all edit an archive this way; the steps live here once.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

from cortex.runtime.program import document_digest

Doc = dict[str, Any]


def members(data: bytes) -> dict[str, bytes]:
    """Every member of the archive `data`, by name."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name: archive.read(name) for name in archive.namelist()}


def packed(files: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    """The archive holding `files`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, payload in files.items():
            archive.writestr(name, payload)
    return buffer.getvalue()


def edited(data: bytes, doc_change: Callable[[Doc], None] | None = None,
           files_change: Callable[[dict[str, bytes]], None] | None = None, *,
           digest: Callable[[Doc], str] | None = document_digest, compression: int = zipfile.ZIP_STORED,
           raw_doc: bytes | None = None) -> bytes:
    """`data` with program.json changed by `doc_change`, its `sha256` rewritten by `digest` (None: left as it is),
    then the members changed by `files_change`; `raw_doc` replaces program.json's bytes outright."""
    files = members(data)
    doc = json.loads(files["program.json"])
    if doc_change is not None:
        doc_change(doc)
    if digest is not None:
        doc["sha256"] = digest(doc)
    files["program.json"] = raw_doc if raw_doc is not None else json.dumps(doc).encode()
    if files_change is not None:
        files_change(files)
    return packed(files, compression)
