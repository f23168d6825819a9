"""The dialect reference (docs/dialects/*.md) is generated from the op definitions and kept current.

A page that differs from what `python3 -m cortex.tools.gen_dialect_docs` writes fails here with
that command; every op of the dialect has a section with an example, and every example parses,
verifies and prints back as written.
"""

from __future__ import annotations

import io
import re

import pytest
from xdsl.dialects import func
from xdsl.printer import Printer

import cortex
from cortex.dialects.cortex import ALL_OPS
from cortex.tools import gen_dialect_docs as gen

EXAMPLE = re.compile(r"^### `(cortex\.\w+)`$(?:(?!^### ).)*?^```mlir\n(.*?)^```$", re.S | re.M)


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return gen.generate()


@pytest.mark.slow
def test_committed_pages_are_current(pages):
    for name, text in pages.items():
        path = gen.DOCS / name
        assert path.exists(), f"docs/dialects/{name} is missing: run `{gen.COMMAND}`"
        assert path.read_text() == text, f"docs/dialects/{name} is stale: run `{gen.COMMAND}`"
    assert sorted(p.name for p in gen.DOCS.glob("*.md")) == sorted(pages), f"a page nothing generates: run `{gen.COMMAND}`"


@pytest.mark.slow
def test_every_op_has_a_section_with_an_example(pages):
    examples = {name: text for page in pages.values() for name, text in EXAMPLE.findall(page)}
    assert sorted(examples) == sorted(op.name for op in ALL_OPS)


@pytest.mark.slow
@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_each_example_parses_verifies_and_prints_back(pages, op):
    examples = {name: text for page in pages.values() for name, text in EXAMPLE.findall(page)}
    text = examples[op.name]
    module = cortex.parse(text)  # parses and verifies, with located diagnostics
    (fn,) = module.ops
    assert isinstance(fn, func.FuncOp)
    assert [o.name for o in fn.body.block.ops] == [op.name, "func.return"]
    out = io.StringIO()
    Printer(stream=out).print_op(fn)
    assert out.getvalue().rstrip() == text.rstrip()


def test_check_mode_names_the_command_for_a_stale_page(pages, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gen, "DOCS", tmp_path)
    monkeypatch.setattr(gen, "generate", lambda: pages)
    (tmp_path / "cortex.md").write_text("old\n")
    assert gen.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"docs/dialects/cortex.md is stale: run `{gen.COMMAND}`" in err
    assert not (tmp_path / "cortex-quant.md").exists()  # --check writes nothing


def test_help_points_to_the_reference():
    """cortex-run's help cites the generated reference, and every page it cites exists (files outside the
    repository are kept out by tests/test_no_outside_references.py)."""
    from pathlib import Path

    from cortex.tools.cortex_run import build_parser

    root = Path(cortex.__file__).resolve().parent
    help_text = build_parser().format_help()
    cited = re.findall(r"docs/dialects/[\w-]+\.md", help_text)
    assert cited and all((root / c).exists() for c in cited)
