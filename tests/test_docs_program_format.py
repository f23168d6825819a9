"""docs/program-format.md lists exactly the members and fields `Program.save` writes (a real save, read back)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

import cortex
from cortex.runtime import program as P

ROOT = Path(cortex.__file__).resolve().parent
DOC = (ROOT / "docs" / "program-format.md").read_text()
SMALL = ROOT / "lit" / "passes" / "dce_report.mlir"


def table_keys(heading: str) -> list[str]:
    """The first-column names (in backquotes) of the table under `heading`."""
    section = DOC.split(heading, 1)[1].split("\n## ", 1)[0]
    return [k for row in re.findall(r"^\| (`[^|]+) \|", section, re.M) for k in re.findall(r"`([^`]+)`", row)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small program (the doc's example function, power_save), saved unsigned and signed."""
    compiled = cortex.compile(cortex.parse(SMALL), mode="power_save")
    here = tmp_path_factory.mktemp("programs")
    plain, signed = compiled.save(here / "plain.cortex"), compiled.save(here / "signed.cortex", key="k")
    gray = np.zeros((64, 64), "float32")
    return compiled(gray, gray), plain, signed


def document(path: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("program.json"))


def test_program_json_fields_are_those_save_writes(saved):
    _, plain, signed = saved
    fields = table_keys("## program.json")
    assert len(fields) == len(set(fields))
    assert set(fields) - {"hmac_sha256"} == set(document(plain)), "docs/program-format.md's field table is stale"
    assert set(fields) == set(document(signed))


def test_format_and_version_are_the_documented_ones(saved):
    doc = document(saved[1])
    assert doc["format"] == P.FORMAT and f'`"{P.FORMAT}"`' in DOC
    assert doc["version"] == P.VERSION and f"`{P.VERSION}`" in DOC.split("| `version` |", 1)[1].split("\n", 1)[0]
    assert "2^32" in DOC and P.MAX_PROGRAM_BYTES == 2**32
    assert P.KEY_VARIABLE in DOC


def test_archive_members_have_the_documented_forms(saved):
    _, plain, _ = saved
    forms = table_keys("## The archive")
    assert forms == ["program.json", "executables/<name>/<member>", "variants/<k>/executables/<name>/<member>"]
    with zipfile.ZipFile(plain) as archive:
        names = archive.namelist()
    doc = document(plain)
    assert names[0] == "program.json"
    executables = {n.split("/")[1] for n in names[1:]}
    assert executables == set(doc["executables"]) == {"entry", "split"}
    for name in executables:
        assert f"`{name}`" in DOC
    numpy_members = re.search(r"\*\*numpy\*\*: (.*?)\n- ", DOC, re.S).group(1)
    documented = re.findall(r"`([^`]+)`", numpy_members)
    for n in names[1:]:
        member = n.split("/", 2)[2]
        assert member in documented or (member.startswith("constants/") and "constants/<name>" in documented), n


def test_multi_mode_program_members_and_modes_field(tmp_path):
    """A multi-mode program: each variant after the first under variants/<k>/, and `modes` as documented."""
    compiled = cortex.compile(cortex.examples.L2_PIPELINE, modes=["power_save", "motion"]).specialize((64, 96, 3))
    path = compiled.save(tmp_path / "modes.cortex")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    assert {n.split("/", 2)[0] + "/" + n.split("/", 2)[1] for n in names if n.startswith("variants/")} == {"variants/0"}
    modes = document(path)["modes"]
    assert set(modes) == {"order", "variants", "switch_states"} and modes["order"] == ["power_save", "motion"]
    row = DOC.split("| `modes` |", 1)[1].split("\n", 1)[0]
    assert all(f"`{k}`" in row for k in modes)


def test_states_and_ports_kinds_are_the_documented_ones():
    row = DOC.split("| `states` |", 1)[1].split("\n", 1)[0]
    assert re.findall(r"`([^`]+)`", row)[2:7] == list(P.STATE_KINDS)


def test_a_loaded_copy_runs_as_the_compiled_one(saved):
    """What loading does (the doc's last section): the loaded pipeline gives the same results."""
    result, plain, signed = saved
    gray = np.zeros((64, 64), "float32")
    for path, key in ((plain, None), (signed, "k")):
        np.testing.assert_array_equal(cortex.load(path, key=key)(gray, gray)[0], result[0])
    with pytest.raises(cortex.CortexError, match="not signed"):
        cortex.load(plain, key="k")
