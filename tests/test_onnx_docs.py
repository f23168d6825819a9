"""docs/onnx.md lists every operator of the importer's table, with its opsets and limits, as generated."""

from __future__ import annotations

from cortex.frontends.onnx import OPERATORS
from cortex.tools import gen_onnx_docs as gen


def test_committed_operator_table_is_current() -> None:
    page = gen.PAGE.read_text()
    assert gen.updated(page) == page, "docs/onnx.md's operator table is stale: run python3 -m cortex.tools.gen_onnx_docs"


def test_every_operator_has_a_row_and_a_converter() -> None:
    page = gen.PAGE.read_text()
    for name, entry in OPERATORS.items():
        assert f"\n| {name} | {entry.since}+ |" in page
        assert callable(entry.convert) and entry.mapping


def test_check_mode_fails_on_a_stale_page(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "onnx.md"
    stale.write_text(gen.PAGE.read_text().replace("| Relu |", "| Rleu |"))
    monkeypatch.setattr(gen, "PAGE", stale)
    assert gen.main(["--check"]) == 1
    gen.main([])
    assert gen.main(["--check"]) == 0
