"""A saved program is code: its digests are mandatory, its size is bounded per reference, its path is a regular
file, and saving it is atomic.

What held before: a "numpy" member whose `sha256` was deleted or null loaded and ran unchecked; program.json had
no digest of its own, so a state's class could be edited silently; a member named by several references inflated
once per reference while the cap counted it once; `cortex.load` of a FIFO blocked forever; `save` wrote in place
(a full disk destroyed the old file) and raised raw OSErrors on bad paths; an encrypted entry raised a raw
RuntimeError. Each is now a one-line CortexError (or, for save, the old file left whole).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import resource
import signal
import threading
import zipfile

import numpy as np
import pytest
from helpers.pipelines import small_l2_text
from helpers.program_archive import edited

import cortex
from cortex.errors import CortexError
from cortex.runtime import program

COMPILED = cortex.compile(cortex.parse(small_l2_text()))
GOOD = COMPILED.program.to_bytes()
FRAMES = [np.full((96, 128, 3), 40 * i, np.uint8) for i in range(4)]


def format_digest(doc: dict) -> str:
    """program.json's digest as the format defines it: SHA-256 of the canonical JSON of every field but the digest
    and the signature (what anyone editing a file can do: the digest catches damage only)."""
    body = {k: v for k, v in doc.items() if k not in ("sha256", "hmac_sha256")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return hashlib.sha256(canonical).hexdigest()


def seal(doc: dict) -> None:
    """Rewrite program.json's digest to match its fields."""
    doc["sha256"] = format_digest(doc)


def rebuilt(doc_change=None, files_change=None, resealed=True, data=GOOD) -> bytes:
    return edited(data, doc_change, files_change, digest=format_digest if resealed else None,
                  compression=zipfile.ZIP_DEFLATED)  # small on disk, large inflated


def assert_same_results(loaded) -> None:
    """`loaded` gives what a fresh load of the untouched program gives, frame by frame (state included)."""
    reference = load_bytes(GOOD)
    for frame in FRAMES:
        for got, expected in zip(loaded(frame), reference(frame)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def load_bytes(data: bytes):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.cortex")
        with open(path, "wb") as file:
            file.write(data)
        return cortex.load(path)


def refused(tmp_path, data: bytes, words: str, **load) -> str:
    path = tmp_path / "p.cortex"
    path.write_bytes(data)
    with pytest.raises(CortexError) as info:
        cortex.load(path, **load)(FRAMES[0])
    text = str(info.value)
    assert words in text and "\n" not in text and len(text) < 500, text
    return text


EVIL = b"raise SystemExit('the edited source ran')\n"


def edit_source(files):
    files["executables/entry/source"] = EVIL


@pytest.mark.parametrize("digest", ["deleted", None, 5, "00" * 32 + "x"], ids=repr)
def test_a_member_without_a_valid_digest_is_refused_not_run(tmp_path, digest):
    def drop(doc):
        ref = doc["executables"]["entry"]["members"]["source"]
        if digest == "deleted":
            del ref["sha256"]
        else:
            ref["sha256"] = digest

    refused(tmp_path, rebuilt(drop, edit_source), "member 'source'")


def test_an_edited_constant_is_refused(tmp_path):
    """Bytes members are checked as text members are: a weight table changed under its old digest."""
    def change(files):
        name = "executables/entry/constants/_k_saliency"
        files[name] = bytes(len(files[name]))

    refused(tmp_path, rebuilt(files_change=change), "member 'constants/_k_saliency' does not match its SHA-256")


@pytest.mark.parametrize("digest", ["deleted", None, "", 7], ids=repr)
def test_program_json_without_its_digest_is_refused(tmp_path, digest):
    def drop(doc):
        if digest == "deleted":
            doc.pop("sha256", None)
        else:
            doc["sha256"] = digest

    refused(tmp_path, rebuilt(drop, resealed=False), "program.json carries no SHA-256")


@pytest.mark.parametrize(
    "change",
    [lambda d: d["states"][5].update(kind="read-only"),  # prev_score: a recurrence run as if frame-parallel
     lambda d: d["weights"].update({next(iter(d["weights"])): 99.0}),
     lambda d: d["executables"]["entry"]["members"]["source"].update(sha256=hashlib.sha256(EVIL).hexdigest())],
    ids=["state class", "weight", "member digest"],
)
def test_an_edited_field_is_refused_by_program_jsons_digest(tmp_path, change):
    def resealed_first(doc):
        seal(doc)
        change(doc)

    refused(tmp_path, rebuilt(resealed_first, edit_source, resealed=False), "program.json does not match its SHA-256")


def test_the_saved_digest_covers_the_state_classes():
    doc = json.loads(zipfile.ZipFile(io.BytesIO(GOOD)).read("program.json"))
    edited = json.loads(json.dumps(doc))
    edited["states"][5]["kind"] = "read-only"
    seal(edited)
    assert len(doc["sha256"]) == 64 and doc["sha256"] != edited["sha256"]


def test_an_older_format_says_recompile(tmp_path):
    text = refused(tmp_path, rebuilt(lambda d: d.update(version=1)), "saved by an older Cortex; recompile")
    assert f"format version 1; this runtime reads version {program.VERSION}" in text


def test_a_state_too_large_to_allocate_is_refused(tmp_path):
    """A state's zeros are made at load: a resealed 2**31-1 × 2**31-1 state was the allocator's raw error."""
    def grow(doc):
        port = next(p for p in doc["args"] if p["kind"] == "state" and p["spec"]["shape"])
        port["spec"]["shape"] = [2**31 - 1] * len(port["spec"]["shape"])

    refused(tmp_path, rebuilt(grow), "elements")


# ---------------------------------------------------------------- the inflated size, counted per reference


@pytest.fixture
def small_cap(monkeypatch):
    import cortex.runtime.program_file as file_module

    monkeypatch.setattr(file_module, "MAX_PROGRAM_BYTES", len(GOOD) + 150_000)


def test_several_large_entries_together_exceed_the_cap(tmp_path, small_cap):
    """Each entry is under the cap; their sum is not."""
    def add(files):
        for k in range(3):
            files[f"executables/entry/extra{k}"] = bytes(60_000)

    refused(tmp_path, rebuilt(files_change=add), "too large")


def test_one_entry_referenced_many_times_counts_each_time(tmp_path, small_cap):
    """One 60 kB entry named by three members inflates three times: 180 kB, over the cap."""
    blob = bytes(60_000)

    def refer(doc):
        members = doc["executables"]["entry"]["members"]
        for k in range(3):
            members[f"constants/extra{k}"] = {"file": "executables/entry/extra", "encoding": "bytes",
                                              "sha256": hashlib.sha256(blob).hexdigest()}

    refused(tmp_path, rebuilt(refer, lambda files: files.__setitem__("executables/entry/extra", blob)), "too large")


def test_twice_referenced_entries_under_the_cap_still_load(tmp_path, small_cap):
    blob = bytes(1000)

    def refer(doc):
        members = doc["executables"]["entry"]["members"]
        for k in range(2):
            members[f"constants/extra{k}"] = {"file": "executables/entry/extra", "encoding": "bytes",
                                              "sha256": hashlib.sha256(blob).hexdigest()}

    path = tmp_path / "p.cortex"
    path.write_bytes(rebuilt(refer, lambda files: files.__setitem__("executables/entry/extra", blob)))
    assert_same_results(cortex.load(path))


def test_a_file_larger_than_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import cortex.runtime.program_file as file_module

    monkeypatch.setattr(file_module, "MAX_PROGRAM_BYTES", len(GOOD) - 1)
    text = refused(tmp_path, GOOD, "the file is too large")
    assert text.startswith("cannot read program '")


def test_an_encrypted_entry_is_one_line(tmp_path):
    """program.json (the first entry) marked encrypted, in its local header and its central directory record:
    zipfile raised a raw RuntimeError asking for a password."""
    data = bytearray(GOOD)
    assert data[:4] == b"PK\x03\x04"
    data[6] |= 0x1
    data[GOOD.index(b"PK\x01\x02") + 8] |= 0x1
    refused(tmp_path, bytes(data), "encrypted")


# ---------------------------------------------------------------- what is not a regular file


def load_in_a_thread(path):
    """`cortex.load(path)` on a daemon thread: the old code blocked forever on a FIFO."""
    outcome: list[BaseException | object] = []

    def run():
        try:
            outcome.append(cortex.load(path))
        except BaseException as e:  # noqa: BLE001 - reported to the test
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    assert outcome, f"cortex.load({path}) did not return"
    return outcome[0]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_what_is_not_a_regular_file_is_refused_before_it_is_read(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "p.cortex"
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/zero"  # would never end
    else:
        path = tmp_path
    error = load_in_a_thread(path)
    assert isinstance(error, CortexError) and "not a regular file" in str(error), error


# ---------------------------------------------------------------- saving


def test_a_save_that_fails_leaves_the_old_file_whole(tmp_path):
    """A full disk (here: a file-size limit) while saving: the old program is still there, byte for byte,
    with no temporary left beside it."""
    path = tmp_path / "p.cortex"
    path.write_bytes(b"the old program")
    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, before[1]))
    try:
        with pytest.raises(CortexError, match=r"^cannot save program to .*p\.cortex': ") as info:
            COMPILED.save(path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
        signal.signal(signal.SIGXFSZ, handler)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == b"the old program"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.cortex"]


def test_save_replaces_the_old_file_and_keeps_its_mode(tmp_path):
    path = tmp_path / "p.cortex"
    path.write_bytes(b"the old program")
    path.chmod(0o640)
    COMPILED.save(path)
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.cortex"]
    assert_same_results(cortex.load(path))


@pytest.mark.parametrize("where", ["missing folder", "a directory", "under a file"])
def test_save_to_a_bad_path_is_one_line(tmp_path, where):
    (tmp_path / "file").write_bytes(b"")
    path = {"missing folder": tmp_path / "nowhere" / "p.cortex", "a directory": tmp_path,
            "under a file": tmp_path / "file" / "p.cortex"}[where]
    with pytest.raises(CortexError, match=r"^cannot save program to '") as info:
        COMPILED.save(path)
    assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_save_without_permission_is_one_line(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir(0o500)
    with pytest.raises(CortexError, match=r"^cannot save program to '.*Permission denied"):
        COMPILED.save(folder / "p.cortex")


# ---------------------------------------------------------------- the keyed signature


def test_a_signed_program_loads_with_its_key_only(tmp_path, monkeypatch):
    monkeypatch.delenv("CORTEX_PROGRAM_KEY", raising=False)
    path = COMPILED.save(tmp_path / "signed.cortex", key="deploy-secret")
    assert_same_results(cortex.load(path, key="deploy-secret"))
    assert_same_results(cortex.load(path))  # no key: the digests only
    with pytest.raises(CortexError, match="signature does not match the key"):
        cortex.load(path, key="another")
    monkeypatch.setenv("CORTEX_PROGRAM_KEY", "another")
    with pytest.raises(CortexError, match="signature does not match the key"):
        cortex.load(path)
    monkeypatch.delenv("CORTEX_PROGRAM_KEY")
    plain = COMPILED.save(tmp_path / "plain.cortex")
    with pytest.raises(CortexError, match="not signed"):
        cortex.load(plain, key="deploy-secret")


def test_an_edit_resealed_without_the_key_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("CORTEX_PROGRAM_KEY", raising=False)
    signed = COMPILED.program.to_bytes(key="deploy-secret")
    refused(tmp_path, rebuilt(lambda d: d["states"][5].update(kind="read-only"), edit_source, data=signed),
            "signature does not match the key", key="deploy-secret")


@pytest.mark.parametrize("key", [5, 1.5, ["k"]], ids=repr)
def test_a_bad_key_is_one_line(tmp_path, key):
    with pytest.raises(CortexError, match="a program key is text or bytes"):
        COMPILED.save(tmp_path / "p.cortex", key=key)


# ---------------------------------------------------------------- odd keys and paths


@pytest.mark.parametrize("key", ["", b""], ids=repr)
def test_an_empty_key_says_it_is_empty(tmp_path, key):
    with pytest.raises(CortexError, match=r"^the program key is empty") as info:
        COMPILED.save(tmp_path / "p.cortex", key=key)
    assert "text or bytes, got" not in str(info.value)


@pytest.mark.skipif(not hasattr(os, "environb"), reason="a bytes environment is POSIX's")
def test_a_key_variable_that_is_not_utf8_is_one_cortex_error_on_save_and_load(tmp_path, monkeypatch):
    path = COMPILED.save(tmp_path / "p.cortex")
    monkeypatch.setitem(os.environb, b"CORTEX_PROGRAM_KEY", b"sec\xffret")
    for action in (lambda: COMPILED.save(tmp_path / "q.cortex"), lambda: cortex.load(path)):
        with pytest.raises(CortexError, match=r"CORTEX_PROGRAM_KEY is not UTF-8 text") as info:
            action()
        assert "\n" not in str(info.value) and "0xff" in str(info.value)
    with pytest.raises(CortexError, match=r"key= is not UTF-8 text \(U\+DCFF at offset 3\)"):  # a str key with a lone surrogate, likewise
        COMPILED.save(tmp_path / "r.cortex", key="sec\udcffret")


@pytest.mark.parametrize("path", ["a\0b", "dir\0/p.cortex"], ids=repr)
def test_a_path_with_a_nul_byte_is_one_cortex_error(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CortexError, match=r"NUL byte"):
        COMPILED.save(path)
    with pytest.raises(CortexError, match=r"NUL byte"):
        cortex.load(path)
    assert list(tmp_path.iterdir()) == []
