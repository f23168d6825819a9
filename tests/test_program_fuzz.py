"""Crafted program files, made by mutating a real saved program: every outcome is a clean load or a one-line
CortexError, never another exception, a hang or a crash.

Two properties. An edit that leaves program.json's digest as saved (a field dropped, nulled, retyped or
altered; members swapped, dropped, duplicated or rewritten) is refused unless it changes nothing (a value
replaced by itself), and then the program runs with identical results; a truncated file or a flipped byte
is refused or, where the byte is one nothing reads, runs with identical results. An edit whose
digest is rewritten to match (as anyone can) may load and compute something else, but still never raises
anything but a one-line CortexError, while loading or running.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
import zipfile
from typing import Any

import numpy as np
from helpers.pipelines import small_l2_text
from helpers.program_archive import members
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.runtime.program import Program, document_digest

GOOD = cortex.compile(cortex.parse(small_l2_text())).program.to_bytes()
FRAMES = [np.full((96, 128, 3), 30 + 70 * i, np.uint8) for i in range(2)]


def run(program: Program) -> list[list[np.ndarray]]:
    from cortex.runtime.pipeline import LoadedProgram

    compiled = LoadedProgram(program)
    return [[np.asarray(r) for r in compiled(frame)] for frame in FRAMES]


WANT = run(Program.from_bytes(GOOD))


def unpack(data: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    files = members(data)
    return json.loads(files["program.json"]), files


DOC, FILES = unpack(GOOD)


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in program.json, as a path of keys and indexes."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths(v, (*prefix, i))
    return found


PATHS = [p for p in paths(DOC) if p[0] not in ("sha256",)]
REPLACEMENTS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=12),
    st.just("tensor<64x64xf32>"), st.just("read-only"), st.just([]), st.just({}), st.lists(st.integers(), max_size=3),
    st.just(2**31 - 1),
)


@st.composite
def doc_edit(draw):
    path = draw(st.sampled_from(PATHS))
    action = draw(st.sampled_from(["drop", "replace", "replace"]))
    value = draw(REPLACEMENTS)

    def edit(doc, files):
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if action == "drop":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                del parent[path[-1]]
        else:
            parent[path[-1]] = value

    return edit


MEMBERS = [n for n in FILES if n != "program.json"]


@st.composite
def member_edit(draw):
    action = draw(st.sampled_from(["swap", "drop", "duplicate", "rewrite", "extend"]))
    a, b = draw(st.sampled_from(MEMBERS)), draw(st.sampled_from(MEMBERS))
    junk = draw(st.binary(max_size=64))

    def edit(doc, files):
        if action == "swap":
            files[a], files[b] = files[b], files[a]
        elif action == "drop":
            files.pop(a, None)
        elif action == "duplicate":
            files[(a, "again")] = files.get(b, junk)  # written under a's name a second time
        elif action == "rewrite":
            files[a] = junk
        else:
            files[a] = files.get(a, b"") + junk

    return edit


def pack(doc: dict[str, Any] | None, files: dict[Any, bytes], raw_doc: bytes | None = None) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                if name == "program.json":
                    data = raw_doc if raw_doc is not None else json.dumps(doc).encode()
                archive.writestr(name[0] if isinstance(name, tuple) else name, data)
    return buffer.getvalue()


@st.composite
def crafted(draw, resealed: bool):
    doc, files = json.loads(json.dumps(DOC)), dict(FILES)
    for edit in draw(st.lists(st.one_of(doc_edit(), member_edit()), min_size=1, max_size=3)):
        try:
            edit(doc, files)
        except (KeyError, IndexError, TypeError):
            pass  # a later edit whose place an earlier one removed
    if resealed and isinstance(doc, dict):
        executables = doc.get("executables")
        members = [r for e in (executables.values() if isinstance(executables, dict) else ()) if isinstance(e, dict)
                   and isinstance(e.get("members"), dict) for r in e["members"].values() if isinstance(r, dict)]
        if draw(st.booleans()):  # the member digests rewritten too: the edited members' checks are what stop them
            for ref in members:
                if isinstance(ref.get("file"), str) and ref["file"] in files:
                    ref["sha256"] = hashlib.sha256(files[ref["file"]]).hexdigest()
        doc["sha256"] = document_digest(doc)
    changed = json.dumps(doc, sort_keys=True) != json.dumps(DOC, sort_keys=True) or set(files) != set(FILES) or any(
        files[n] != FILES[n] for n in FILES if n in files)
    data = pack(doc, files)
    cut = draw(st.integers(0, len(data))) if draw(st.integers(0, 4)) == 0 else None  # one file in five damaged
    if cut is not None and not resealed:  # may land on a byte nothing reads (a timestamp): not counted as a change
        data = data[:cut] if draw(st.booleans()) else data[:cut] + bytes([data[cut % len(data)] ^ 0x20]) + data[cut + 1:]
    return data, changed


def outcome(data: bytes) -> list[list[np.ndarray]] | CortexError:
    try:
        return run(Program.from_bytes(data, "crafted"))
    except CortexError as e:
        text = str(e)
        assert "\n" not in text and len(text) < 1000, text
        return e


FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(crafted(resealed=False))
def test_an_edit_behind_the_digest_is_refused_or_changes_nothing(crafted_file):
    data, changed = crafted_file
    result = outcome(data)
    assert isinstance(result, CortexError) or not changed, "an edited program.json or member loaded"
    if not isinstance(result, CortexError):
        for got, want in zip(result, WANT):
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)


@FUZZ
@given(crafted(resealed=True))
def test_an_edit_with_its_digest_rewritten_is_still_one_line(crafted_file):
    outcome(crafted_file[0])
