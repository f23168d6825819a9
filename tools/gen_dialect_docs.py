"""The dialect reference, generated from the op definitions (as MLIR's mlir-tblgen -gen-dialect-doc does from ODS).

    python3 -m cortex.tools.gen_dialect_docs            # writes docs/dialects/*.md
    python3 -m cortex.tools.gen_dialect_docs --check    # exit 1 if a committed page is stale

Everything on a page comes from the code, so it cannot drift from it: a page's introduction is
its module's docstring; each op's summary and description are its class docstring; operands,
results, properties (with their defaults), traits and the custom syntax come from the IRDL
definition; the mode table and the runtime inputs from `cortex.semantics.modes`. Each op's
example is a real use of the op — the shortest one in `examples/` (as written and rewritten
channels-last), else the first in `lit/` — cut out into a function of its own, printed by the op's own printer; tests/test_dialect_docs.py parses and
verifies every example and fails when a committed page differs from what this writes.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayOfConstraint, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    AttrConstraint,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OptOperandDef,
    OptPropertyDef,
    ParamAttrConstraint,
    RangeConstraint,
    RangeLengthConstraint,
    RangeOf,
    VarConstraint,
    VarOperandDef,
)
from xdsl.printer import Printer

from cortex.dialects import layout, quant, state, stencil, tensor_ops, vision, window
from cortex.dialects.cortex import ALL_OPS
from cortex.dialects.traits import Compilable, External, FrameBoundary
from cortex.ir import make_context, parse_module
from cortex.semantics import modes

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "dialects"
COMMAND = "python3 -m cortex.tools.gen_dialect_docs"


@dataclass(frozen=True)
class Section:
    title: str
    module: ModuleType
    ops: Sequence[type[IRDLOperation]]


@dataclass(frozen=True)
class Page:
    file: str
    title: str
    intro: str
    sections: Sequence[Section]


PAGES = (
    Page(
        "cortex.md",
        "The `cortex` dialect",
        "The ops a pipeline or a tensor graph is written in (level L0). The quantised ops and the\n"
        "channels-last ops belong to the same dialect and have pages of their own: "
        "[quantised ops](cortex-quant.md), [channels-last ops](cortex-layout.md).",
        (
            Section("Vision stages", vision, vision.VISION_OPS),
            Section("State and runtime inputs", state, state.STATE_OPS),
            Section("Windows", window, window.WINDOW_OPS),
            Section("Stencils", stencil, stencil.STENCIL_OPS),
            Section("Tensor ops", tensor_ops, tensor_ops.TENSOR_OPS),
        ),
    ),
    Page("cortex-quant.md", "Quantised ops (`cortex` dialect)", "", (Section("Ops", quant, quant.QUANT_OPS),)),
    Page("cortex-layout.md", "Channels-last ops (`cortex` dialect)", "", (Section("Ops", layout, layout.LAYOUT_OPS),)),
)


# ---------------------------------------------------------------- rendering the definition


def attr_text(attr: Attribute) -> str:
    out = io.StringIO()
    Printer(stream=out).print_attribute(attr)
    return out.getvalue()


def constraint_text(c: AttrConstraint | RangeConstraint) -> str:
    """A constraint as a reader writes it: `tensor`, `f32`, `i64 integer`, `tensor | f32`."""
    if isinstance(c, RangeLengthConstraint):
        return constraint_text(c.constraint)
    if isinstance(c, RangeOf):
        return constraint_text(c.constr)
    if isinstance(c, VarConstraint):
        return f"{constraint_text(c.constraint)} (same type: {c.name})"
    if isinstance(c, EqAttrConstraint):
        return f"`{attr_text(c.attr)}`"
    if isinstance(c, BaseAttr):
        return f"`{c.attr.name}`" if hasattr(c.attr, "name") else c.attr.__name__
    if isinstance(c, AnyOf):
        return " or ".join(constraint_text(a) for a in c.attr_constrs)
    if isinstance(c, ArrayOfConstraint):
        return f"array of {constraint_text(c.elem_range_constraint)}"
    if isinstance(c, ParamAttrConstraint):
        params = [constraint_text(p) for p in c.param_constrs if not (isinstance(p, BaseAttr) and p.attr.__name__ in ("BytesAttr", "IntAttr", "FloatData"))]
        base = f"`{c.base_attr.name}`"
        return f"{base} of {', '.join(params)}" if params else base
    if isinstance(c, AnyAttr):
        return "any attribute"
    return type(c).__name__


def kind_of(op: type[IRDLOperation]) -> str:
    if op.has_trait(External):
        return "external: a call to an OpenCV-backed extern after `convert-cortex-to-extern`"
    if op.has_trait(FrameBoundary):
        return "frame boundary: a function argument or result after lowering"
    if op.has_trait(Compilable):
        return "compilable: lowered to linalg/arith/math/tensor by `convert-cortex-to-linalg`"
    return "—"


def docstring(op: type) -> tuple[str, str]:
    """(summary, description) from the class's own docstring; the generic op bases say nothing specific."""
    doc = inspect.cleandoc(op.__dict__.get("__doc__") or "")
    if not doc:  # e.g. the reductions share their base's docstring
        for base in op.__mro__[1:]:
            if base.__module__ == op.__module__ and base.__dict__.get("__doc__"):
                doc = inspect.cleandoc(base.__dict__["__doc__"])
                break
    summary, _, rest = doc.partition("\n\n")
    return " ".join(summary.split()), rest.strip()


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in rows]
    return lines


def op_section(op: type[IRDLOperation], example: str | None) -> list[str]:
    d = op.get_irdl_definition()
    summary, description = docstring(op)
    lines = [f"### `{d.name}`", "", summary or "(no summary)", ""]
    if description:
        lines += [description, ""]
    if d.assembly_format:
        lines += ["Syntax: `` " + " ".join(d.assembly_format.split()) + " ``", ""]
    else:
        lines += ["Syntax: custom (the op's own `parse`/`print`; see the example).", ""]
    if example is not None:
        lines += ["```mlir", example.rstrip(), "```", ""]
    rows = []
    for name, od in d.operands:
        arity = "variadic " if isinstance(od, VarOperandDef) else "optional " if isinstance(od, OptOperandDef) else ""
        rows.append([f"`{name}`", f"{arity}{constraint_text(od.constr)}"])
    if rows:
        lines += table(["operand", "type"], rows) + [""]
    rows = [[f"`{name}`", constraint_text(rd.constr)] for name, rd in d.results]
    if rows:
        lines += table(["result", "type"], rows) + [""]
    rows = []
    for name, pd in d.properties.items():
        if name in ("operandSegmentSizes", "resultSegmentSizes"):  # derived from the operand lists
            continue
        if isinstance(pd, OptPropertyDef):
            default = "absent (optional)"
        elif pd.default_value is not None:
            default = f"`{attr_text(pd.default_value)}`"
        else:
            default = "required"
        rows.append([f"`{name}`", constraint_text(pd.constr), default])
    if rows:
        lines += table(["property", "type", "default"], rows) + [""]
    traits = sorted(type(t).__name__ for t in d.traits)
    lines += [f"Kind: {kind_of(op)}. Traits: " + ", ".join(f"`{t}`" for t in traits) + ".", ""]
    return lines


# ---------------------------------------------------------------- examples from real IR


def examples_corpus() -> Iterator[ModuleOp]:
    """The bundled examples, as written and rewritten channels-last (fixed order)."""
    from cortex.driver import run_passes

    ctx = make_context()
    paths = sorted((ROOT / "examples").glob("*.mlir"))
    for path in paths:
        yield parse_module(path.read_text(), str(path), ctx)
    for path in paths:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # the pass's report
            module = run_passes(parse_module(path.read_text(), str(path), ctx), "cortex-convert-layout{layout=nhwc}")
        yield module


def lit_corpus() -> Iterator[ModuleOp]:
    """The lit tests' inputs that parse and verify (the others test diagnostics), by path."""
    ctx = make_context()
    for path in sorted((ROOT / "lit").rglob("*.mlir")):
        for chunk in path.read_text().split("// -----"):
            try:
                yield parse_module(chunk, str(path), ctx)
            except Exception:
                continue


def examples() -> dict[str, str]:
    """Per op name, the shortest example the bundled examples give; else the first use in lit/."""
    wanted = {op.name for op in ALL_OPS}
    found: dict[str, str] = {}
    for module in examples_corpus():
        for op in module.walk():
            if op.name in wanted:
                text = example_of(op)
                if op.name not in found or len(text) < len(found[op.name]):
                    found[op.name] = text
    if wanted - set(found):
        for module in lit_corpus():
            for op in module.walk():
                if op.name in wanted and op.name not in found:
                    found[op.name] = example_of(op)
            if not wanted - set(found):
                break
    return found


def example_of(op: Operation) -> str:
    """`op` alone in a function whose arguments are its operands (named as the definition names them)."""
    assert isinstance(op, IRDLOperation)
    d = op.get_irdl_definition()
    values: list[SSAValue] = []
    for v in op.operands:
        if v not in values:
            values.append(v)
    block = Block(arg_types=[v.type for v in values])
    named: dict[SSAValue, list[str]] = {}
    for name, _ in d.operands:
        got = getattr(op, name, None)
        group = [got] if isinstance(got, SSAValue) else list(got or ())
        for k, v in enumerate(group):
            named.setdefault(v, []).append(name if len(group) == 1 else f"{name}{k}")
    for i, (arg, value) in enumerate(zip(block.args, values)):
        arg.name_hint = named[value][0] if len(named.get(value, [])) == 1 else f"arg{i}"
    copy = op.clone(value_mapper=dict(zip(values, block.args)))
    copy.attributes.clear()  # tool annotations (origins, profiles) are not part of the op
    for result, (name, _) in zip(copy.results, d.results):
        result.name_hint = name
    block.add_op(copy)
    block.add_op(func.ReturnOp(*copy.results))
    fn = func.FuncOp("example", ([a.type for a in block.args], [r.type for r in copy.results]), Region(block))
    out = io.StringIO()
    Printer(stream=out).print_op(fn)
    return out.getvalue()


# ---------------------------------------------------------------- the extra sections


def modes_section() -> list[str]:
    weights = sorted({w for row in modes.MODES.values() for w in row})
    lines = ["## Modes and runtime inputs", "", inspect.cleandoc(modes.__doc__ or ""), ""]
    lines += table(["mode", *weights], [[m, *(f"{modes.MODES[m].get(w, 0.0):g}" for w in weights)] for m in modes.MODES])
    lines += ["", "Runtime inputs shared by every mode (`cortex.weight`s that mode specialisation leaves alone):", ""]
    lines += table(
        ["input", "default", "`auto` gate (`cortex-run --blur-threshold auto`)"],
        [[f"`{k}`", f"{v:g}", f"{modes.BLUR_AUTO.get(k, v):g}"] for k, v in modes.INPUT_DEFAULTS.items()],
    )
    lines += ["", " ".join(inspect.cleandoc(attribute_doc(modes, "INPUT_DEFAULTS")).split()), ""]
    return lines


def attribute_doc(module: ModuleType, name: str) -> str:
    """The docstring written under a module-level assignment (read from the source)."""
    import ast

    tree = ast.parse(inspect.getsource(module))
    body = tree.body
    for i, node in enumerate(body[:-1]):
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0] if isinstance(node, ast.Assign) else None
        nxt = body[i + 1]
        if isinstance(target, ast.Name) and target.id == name and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            return str(nxt.value.value)
    return ""


# ---------------------------------------------------------------- pages


def render(page: Page, examples: dict[str, str]) -> str:
    lines = [
        f"<!-- generated by `{COMMAND}` from the op definitions: do not edit; edit the docstrings and rerun -->",
        "",
        f"# {page.title}",
        "",
    ]
    if page.intro:
        lines += [page.intro, ""]
    multi = len(page.sections) > 1
    for section in page.sections:
        if multi:
            lines += [f"## {section.title}", ""]
        lines += [inspect.cleandoc(section.module.__doc__ or ""), ""]
        for op in section.ops:
            lines += op_section(op, examples.get(op.name))
    if page.file == "cortex.md":
        lines += modes_section()
    return "\n".join(lines).rstrip() + "\n"


def generate() -> dict[str, str]:
    found = examples()
    return {page.file: render(page, found) for page in PAGES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gen_dialect_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed page differs; write nothing")
    args = parser.parse_args(argv)
    pages = generate()
    stale = [name for name, text in pages.items() if not (DOCS / name).exists() or (DOCS / name).read_text() != text]
    if args.check:
        for name in stale:
            print(f"docs/dialects/{name} is stale: run `{COMMAND}`", file=sys.stderr)
        return 1 if stale else 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (DOCS / name).write_text(text)
    print(f"wrote {len(pages)} pages to docs/dialects/ ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
