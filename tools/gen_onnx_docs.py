"""docs/onnx.md's operator table, generated from the importer's table (`cortex.frontends.onnx.table`).

    python3 -m cortex.tools.gen_onnx_docs            # rewrites the table in docs/onnx.md
    python3 -m cortex.tools.gen_onnx_docs --check    # exit 1 if the committed table is stale

The table sits between two HTML comments in docs/onnx.md; the rest of the page is written by hand.
tests/test_onnx_docs.py fails while the committed table differs from what this writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cortex.frontends.onnx import OPERATORS  # noqa: F401 - importing the package fills the table
from cortex.frontends.onnx.table import DOC_BEGIN, DOC_END, operators_markdown

PAGE = Path(__file__).resolve().parents[1] / "docs" / "onnx.md"


def updated(page: str) -> str:
    """`page` with its generated table replaced by the current one."""
    start, end = page.find(DOC_BEGIN), page.find(DOC_END)
    if start < 0 or end < start:
        raise SystemExit(f"{PAGE}: the markers {DOC_BEGIN!r} ... {DOC_END!r} are missing")
    return page[:start] + operators_markdown() + page[end + len(DOC_END):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/onnx.md's table is stale")
    args = parser.parse_args(argv)
    page = PAGE.read_text()
    new = updated(page)
    if args.check:
        if new != page:
            print(f"{PAGE} is stale: run python3 -m cortex.tools.gen_onnx_docs", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
