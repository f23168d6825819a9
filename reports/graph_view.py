"""The graph view: a GraphVisualizer over cortex IR (table, diff, DOT).

- `render_table(module)`: one row per stage in program order, tagged
  `[compilable]` or `[external_call]`, with the time `cortex-profile`
  recorded (`cortex.profile_ms`; 0.00 for a stage that did not run) and a
  total; a module never profiled gets no time column and says how to profile.
- `render_diff(before, after)`: what a pass pipeline removed, and the time
  that saves.
- `render_dot(module)` / `write_image(dot_text, path)`: the dataflow graph
  for Graphviz.

A "stage" is a cortex op or a call to an extern (after convert-cortex-to-
extern). State, weight and constant ops are inputs rather than stages, so
the table and the diff leave them out (the DOT graph draws them). Program
order follows calls into the module's own functions, so a module
partitioned by `cortex-partition` lists the same stages in the same order,
each marked with the compiled piece that holds it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import ConstantLike, IsTerminator, SymbolTable

from cortex.deprecation import renamed_attributes
from cortex.dialects import abi
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.dialects.traits import FrameBoundary, op_kind
from cortex.errors import CortexError
from cortex.passes.partition import is_compiled_function
from cortex.passes.profile import profile_ms

RULE = "=" * 72
THIN = "-" * 72


@dataclass(frozen=True)
class StageRow:
    """One row of the view: a cortex op or an extern call."""

    op: Operation
    name: str  # the stage: op name without "cortex.", or the extern's name
    hint: str | None  # the SSA name of its (first) result
    external: bool
    ms: float  # cortex.profile_ms, 0.0 when not measured
    piece: str | None  # the compiled function holding it, if not the caller

    @property
    def tag(self) -> str:
        return "[external_call]" if self.external else "[compilable]"

    @property
    def label(self) -> str:
        return f"%{self.hint}" if self.hint else ""


def _callee(op: Operation) -> func.FuncOp | None:
    if not isinstance(op, func.CallOp):
        return None
    callee = SymbolTable.lookup_symbol(op, op.callee)
    return callee if isinstance(callee, func.FuncOp) else None


def _is_extern_decl(fn: func.FuncOp) -> bool:
    return fn.is_declaration or abi.EXTERN in fn.attributes


def root_functions(module: ModuleOp) -> list[func.FuncOp]:
    """Functions with a body that no other function of the module calls."""
    called = {op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)}
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and not _is_extern_decl(op) and op.sym_name.data not in called
    ]


def _walk_calls(
    block_ops: Iterator[Operation], piece: str | None, active: set[str]
) -> Iterator[tuple[Operation, str | None]]:
    for op in block_ops:
        callee = _callee(op)
        if callee is not None and not _is_extern_decl(callee) and callee.sym_name.data not in active:
            name = callee.sym_name.data
            inner_piece = name if is_compiled_function(callee) else piece
            yield from _walk_calls(callee.body.walk(), inner_piece, active | {name})
            continue
        yield op, piece


def program_order(module: ModuleOp) -> Iterator[tuple[Operation, str | None]]:
    """Every op in execution order (calls into the module's functions followed), with its piece."""
    for fn in root_functions(module):
        yield from _walk_calls(fn.body.walk(), None, {fn.sym_name.data})


def _stage(op: Operation, piece: str | None) -> StageRow | None:
    hint = op.results[0].name_hint if op.results else None
    ms = profile_ms(op) or 0.0
    callee = _callee(op)
    if callee is not None and _is_extern_decl(callee):
        extern = callee.attributes.get(abi.EXTERN)
        name = extern.data if isinstance(extern, StringAttr) else callee.sym_name.data
        return StageRow(op, name.removeprefix("cortex."), hint, True, ms, piece)
    if not op.name.startswith("cortex.") or op.has_trait(FrameBoundary) or op.has_trait(ConstantLike):
        return None
    return StageRow(op, op.name.removeprefix("cortex."), hint, op_kind(op) == "external", ms, piece)


def stages(module: ModuleOp) -> list[StageRow]:
    """The rows of the view, in program order."""
    return [s for op, piece in program_order(module) if (s := _stage(op, piece)) is not None]


def _row(prefix: str, stage: StageRow, ms: float | None, approx: bool = False) -> str:
    """One stage; `ms` None: the module was not profiled, so no time column at all."""
    where = f"  in @{stage.piece}" if stage.piece else ""
    if ms is None:
        return f"  {prefix}  {stage.name:<20} {stage.label}{where}".rstrip()
    time = f"(~{ms:.2f}ms)" if approx else f"({ms:.2f}ms)"
    return f"  {prefix}  {stage.name:<20} {stage.label:<14} {time:>11}{where}"


def render_table(module: ModuleOp) -> str:
    """The stage table: one tagged row per stage with its profiled time, and the total."""
    rows = stages(module)
    roots = ", ".join(f"@{fn.sym_name.data}" for fn in root_functions(module)) or "(no function)"
    lines = [RULE, f"Cortex Graph IR  {roots}", RULE]
    if not any(profile_ms(s.op) is not None for s in rows):  # nothing measured: no column of zeros
        lines += [_row(f"{s.tag:<15}", s, None) for s in rows]
        lines += [
            THIN,
            f"  {len(rows)} stages, not profiled: -p 'cortex-profile{{frames=N}}' measures each stage's time",
            RULE,
        ]
        return "\n".join(lines) + "\n"
    lines += [_row(f"{s.tag:<15}", s, s.ms) for s in rows]
    by_kind: dict[str, float] = defaultdict(float)
    for s in rows:
        by_kind[s.tag] += s.ms
    lines += [
        THIN,
        f"  Total: {sum(s.ms for s in rows):.2f}ms  (compilable {by_kind['[compilable]']:.2f}ms, "
        f"external_call {by_kind['[external_call]']:.2f}ms, {len(rows)} stages)",
        RULE,
    ]
    return "\n".join(lines) + "\n"


def match_stages(before: list[StageRow], after: list[StageRow]) -> dict[int, int]:
    """Pairs (index in before → index in after) of the same stage.

    First by SSA name and stage name (stable across rewrites: a replaced op
    inherits the name of the value it replaces), then, for what is left, by
    stage name and occurrence index among the unmatched rows.
    """
    matched: dict[int, int] = {}
    by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, s in enumerate(after):
        if s.hint:
            by_key[(s.hint, s.name)].append(j)
    for i, s in enumerate(before):
        queue = by_key.get((s.hint, s.name)) if s.hint else None
        if queue:
            matched[i] = queue.pop(0)
    used = set(matched.values())
    by_name: dict[str, list[int]] = defaultdict(list)
    for j, s in enumerate(after):
        if j not in used:
            by_name[s.name].append(j)
    for i, s in enumerate(before):
        if i not in matched and by_name.get(s.name):
            matched[i] = by_name[s.name].pop(0)
    return matched


def render_diff(before: ModuleOp, after: ModuleOp) -> str:
    """Rows of `before`, `- REMOVED` when gone from `after`, `✓` otherwise; then the saving.

    A stage whose result became a constant of the same name (canonicalize
    folds center_crop, which depends only on the shape) is `- FOLDED`: it
    no longer runs either. One whose result is now computed by other ops
    of the same name (convert-cortex-to-linalg) is `↓ LOWERED`: it still
    runs, so its time stays in the total.

    The times are the profile of `before`: the saving is
    what the removed stages cost. A stage that only `after` has is listed
    as `+ ADDED` with its own time (0 when `after` was not profiled). So
    `after` may come from an unprofiled copy, which CSE can simplify fully
    (profile times, being attributes, keep identical ops apart).
    """
    old, new = stages(before), stages(after)
    matched = match_stages(old, new)
    # what now defines each SSA name of `after`: a constant, or other ops
    defined = {
        r.name_hint: op.has_trait(ConstantLike) for op, _ in program_order(after) for r in op.results if r.name_hint
    }
    lines = ["[graph diff]"]
    before_total = after_total = 0.0
    for i, s in enumerate(old):
        before_total += s.ms
        if i in matched:
            after_total += s.ms
            lines.append(_row("✓        ", s, s.ms, approx=True))
        elif s.hint in defined and defined[s.hint]:
            lines.append(_row("- FOLDED ", s, s.ms, approx=True))
        elif s.hint in defined:
            after_total += s.ms
            lines.append(_row("↓ LOWERED", s, s.ms, approx=True))
        else:
            lines.append(_row("- REMOVED", s, s.ms, approx=True))
    for j in sorted(set(range(len(new))) - set(matched.values())):
        after_total += new[j].ms
        lines.append(_row("+ ADDED  ", new[j], new[j].ms, approx=True))
    saved = before_total - after_total
    change = f"~{saved:.1f}ms saved" if saved >= 0 else f"~{-saved:.1f}ms more"
    lines.append(f"  Total: {before_total:.1f}ms → {after_total:.1f}ms ({change})")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- DOT export

STYLES = {
    "compilable": 'shape=box, style="rounded,filled", fillcolor="#d6eaff", color="#3572b0"',
    "external": 'shape=box, style="filled,bold", fillcolor="#ffe0b3", color="#cc7a00"',
    "state": 'shape=cylinder, style=filled, fillcolor="#d9f2d9", color="#2e7d32"',
    "weight": 'shape=note, style=filled, fillcolor="#fff7c2", color="#9e8600"',
    "constant": 'shape=box, style="rounded,dashed", color="#888888", fontcolor="#555555"',
    "branch": 'shape=diamond, style=filled, fillcolor="#eeeeee"',
    "call": 'shape=component, style=filled, fillcolor="#d6eaff", color="#3572b0"',
    "input": 'shape=invhouse, style=filled, fillcolor="#f2f2f2"',
    "output": 'shape=house, style=filled, fillcolor="#f2f2f2"',
}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _style(op: Operation) -> str:
    if isinstance(op, (StateOp, UpdateStateOp)):
        return "state"
    if isinstance(op, WeightOp):
        return "weight"
    if op.has_trait(ConstantLike):
        return "constant"
    callee = _callee(op)
    if callee is not None:
        return "external" if _is_extern_decl(callee) else "call"
    if op.has_trait(IsTerminator):
        return "output"
    if op.regions and op.name.startswith("scf."):
        return "branch"
    return op_kind(op)


def _label(op: Operation) -> str:
    if isinstance(op, (StateOp, UpdateStateOp, WeightOp)):
        verb = {"cortex.state": "state", "cortex.update_state": "update_state", "cortex.weight": "weight"}[op.name]
        lines = [f'{verb} "{op.state_name}"']
    elif (callee := _callee(op)) is not None:
        extern = callee.attributes.get(abi.EXTERN)
        lines = [extern.data if isinstance(extern, StringAttr) else f"call @{callee.sym_name.data}"]
    else:
        lines = [op.name.removeprefix("cortex.")]
    hints = [f"%{r.name_hint}" for r in op.results if r.name_hint]
    if hints:
        lines.append(", ".join(hints))
    ms = profile_ms(op)
    if ms is not None:
        lines.append(f"{ms:.2f} ms")
    return "\n".join(lines)


class _DotWriter:
    """Emits one cluster per function (and per branch block), externals in their own sub-cluster."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.ids: dict[object, str] = {}
        self.out: list[str] = []
        self.edges: list[str] = []
        self.clusters = 0

    def node_id(self, key: object) -> str:
        """A stable id per op or block argument (allocated on first mention)."""
        if key not in self.ids:
            self.ids[key] = f"n{len(self.ids)}"
        return self.ids[key]

    def source(self, value: SSAValue) -> str:
        """The node a value comes from: its defining op, or an argument node."""
        return self.node_id(value if isinstance(value, BlockArgument) else value.owner)

    def emit_node(self, key: object, label: str, style: str, indent: str) -> str:
        nid = self.node_id(key)
        self.out.append(f"{indent}{nid} [label={_quote(label)}, {STYLES[style]}];")
        return nid

    def open_cluster(self, label: str, indent: str, attrs: str, name: str | None = None) -> None:
        if name is None:
            self.clusters += 1
            name = f"cluster_{self.clusters}"
        self.out.append(f"{indent}subgraph {_quote(name)} {{")
        self.out.append(f"{indent}  label={_quote(label)}; {attrs}")

    def emit_block(self, block: Block, indent: str) -> None:
        for arg in block.args:
            hint = f"%{arg.name_hint}" if arg.name_hint else f"arg #{arg.index}"
            self.emit_node(arg, f"{hint}\n{arg.type}", "input", indent)
        externals: list[Operation] = []
        for op in block.ops:
            if op.name == "scf.yield" and op.parent_op() is not None:
                target = self.node_id(op.parent_op())
                for value in op.operands:
                    self.edges.append(f'{self.source(value)} -> {target} [label="yield", style=dashed];')
            elif (style := _style(op)) == "external":
                externals.append(op)
            else:
                self.emit_op(op, style, indent)
        if externals:
            look = 'style="dashed,rounded"; color="#cc7a00"; fontcolor="#cc7a00";'
            self.open_cluster("external (OpenCV)", indent, look)
            for op in externals:
                self.emit_op(op, "external", indent + "  ")
            self.out.append(f"{indent}}}")

    def emit_op(self, op: Operation, style: str, indent: str) -> None:
        label = "return" if isinstance(op, func.ReturnOp) else _label(op)
        nid = self.emit_node(op, label, style, indent)
        for value in op.operands:
            hint = f"%{value.name_hint}" if value.name_hint else ""
            self.edges.append(f"{self.source(value)} -> {nid} [label={_quote(hint)}];")
        callee = _callee(op)
        if callee is not None and not _is_extern_decl(callee):
            body = callee.body.block
            first = body.args[0] if body.args else body.first_op
            self.edges.append(
                f"{nid} -> {self.node_id(first)} [style=dotted, arrowhead=empty, "
                f"lhead={_quote(function_cluster(callee))}, label=\"calls\"];"
            )
        if not op.name.startswith("scf."):
            return  # the body of a linalg.generic and the like is not dataflow between stages
        for r, region in enumerate(op.regions):
            for b, block in enumerate(region.blocks):
                name = ("then", "else")[r] if op.name == "scf.if" and r < 2 else f"region {r} block {b}"
                self.open_cluster(name, indent, 'style=rounded; color="#999999";')
                self.emit_block(block, indent + "  ")
                self.out.append(f"{indent}}}")

    def render(self) -> str:
        self.out = [
            "digraph cortex {",
            "  compound=true;",
            "  rankdir=TB;",
            '  node [fontname="Helvetica", fontsize=10];',
            '  edge [fontname="Helvetica", fontsize=9];',
        ]
        for fn in self.module.ops:
            if not isinstance(fn, func.FuncOp) or _is_extern_decl(fn):
                continue
            compiled = is_compiled_function(fn)
            title = f"@{fn.sym_name.data}" + ("  [compiled]" if compiled else "")
            color = "#3572b0" if compiled else "#333333"
            self.open_cluster(title, "  ", f'color="{color}";', name=function_cluster(fn))
            self.emit_block(fn.body.block, "    ")
            self.out.append("  }")
        return "\n".join([*self.out, *("  " + e for e in self.edges), "}"]) + "\n"


def function_cluster(fn: func.FuncOp) -> str:
    return f"cluster_fn_{fn.sym_name.data}"


def render_dot(module: ModuleOp) -> str:
    """The dataflow graph as Graphviz DOT: a node per op, an edge per SSA use.

    Compilable ops are blue rounded boxes; external (OpenCV) ops orange boxes
    grouped in a dashed "external" cluster of their block; state ops green
    cylinders, weights yellow notes, constants dashed; each function (and
    each branch of an `scf.if`) is a cluster; a call to a compiled piece
    points to the piece's cluster.
    """
    return _DotWriter(module).render()


IMAGE_FORMATS = ("svg", "png", "pdf")


def write_image(dot_text: str, path: str | Path) -> Path:
    """Write `dot_text` to `path`: as text for .dot/.gv, rendered by Graphviz for .svg/.png/.pdf."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt in ("dot", "gv"):
        try:
            path.write_text(dot_text)
        except OSError as e:
            raise CortexError(f"cannot write {path}: {e.strerror}") from None
        return path
    if fmt not in IMAGE_FORMATS:
        raise CortexError(f"cannot render {path}: unknown image format '{path.suffix}' (use .svg, .png, .pdf or .dot)")
    dot = shutil.which("dot")
    if dot is None:
        raise CortexError(
            f"cannot render {path}: Graphviz's 'dot' is not installed (install graphviz, or write a .dot file)"
        )
    proc = subprocess.run([dot, f"-T{fmt}", "-o", str(path)], input=dot_text, capture_output=True, text=True)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no message"])[0]
        raise CortexError(f"cannot render {path}: dot failed: {reason}")
    return path


if not TYPE_CHECKING:  # the former name, for one release (`StageRow`; type checkers see only the new one)
    __getattr__ = renamed_attributes(__name__, {"Stage": "StageRow"})

__all__ = [
    "StageRow",
    "match_stages",
    "program_order",
    "render_diff",
    "render_dot",
    "render_table",
    "stages",
    "write_image",
]
