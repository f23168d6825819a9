"""cortex-opt's knowledge of passes: `--list-passes`, and the reference `--verify-each-pass-semantics`
takes its results from (a shape-generic module is bound first, or told how to be)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cortex.registry import cortex_passes, describe_options


def semantic_reference(ctx, before: ModuleOp | None, passes: Sequence[ModulePass]) -> tuple[ModuleOp | None, str | None]:
    """The module (and entry) `--verify-each-pass-semantics` takes its reference results from.

    A shape-generic entry (the bundled pipeline) has no input to sample until the pipeline's
    `cortex-specialize-shapes` binds its shapes: the reference is then the input bound to those
    shapes, and the passes before the binding run on the same concrete inputs. Without that
    pass it is a CortexError saying so.
    """
    from cortex.passes.specialize_shapes import is_shape_generic

    binding = next((p for p in passes if p.name == "cortex-specialize-shapes"), None)
    if before is None or binding is None:
        return before, None
    entry = getattr(binding, "entry", None)
    if not isinstance(entry, str) or not is_shape_generic(before, entry):
        return before, None
    bound = before.clone()
    binding.apply(ctx, bound)
    return bound, entry


def bind_shapes_hint(module: ModuleOp) -> str:
    """For a module with a `?`-shaped function argument: how to give `--verify-each-pass-semantics` shapes."""
    from xdsl.dialects import func

    from cortex.passes.specialize_shapes import is_shape_generic

    names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    generic = next((name for name in names if is_shape_generic(module, name)), None)
    if generic is None:
        return ""
    return (f"; @{generic} is shape-generic: start the pipeline with cortex-specialize-shapes, e.g. "
            f"-p 'cortex-specialize-shapes{{entry={generic} shapes=480x640x3}},...', and the check samples "
            "inputs of those shapes")


def once_bound(check: Callable, entry: str) -> Callable:
    """`check` from the pass that binds `entry`'s shapes on: before it the module cannot run on the
    reference inputs (its states have no shape), so a change made there is reported at the binding."""
    from cortex.passes.specialize_shapes import is_shape_generic

    def checked(previous, module, following) -> None:
        if not is_shape_generic(module, entry):
            check(previous, module, following)

    return checked


def pass_summary(cls: type[ModulePass]) -> str:
    """The first sentence of a pass's docstring, whole, on one line ("" when it has none of its own).

    A paragraph that only shows the pass's syntax (`cortex-frame-split{entry=...}`) is skipped, and a
    leading `name{...}:` dropped; the sentence ends at the first `.`, `:` or `;` outside parentheses.
    """
    doc = inspect.getdoc(cls) or ""
    if not doc or doc.startswith(f"{cls.__name__}(") or cls.__doc__ is None:  # dataclass's generated signature
        return ""
    name = str(getattr(cls, "name", ""))
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    if name:  # `cortex-frame-split{entry=l2_frame}: the entry becomes ...`: the syntax is no summary, the rest is
        paragraphs = [re.sub(rf"^`?{re.escape(name)}(\{{[^}}]*\}})?`?:\s+", "", p) for p in paragraphs]
    prose = [p for p in paragraphs if not (p.lstrip("`").split()[0].startswith(name) or len(p.split()) == 1)]
    return first_sentence(prose[0]) if prose else ""


def first_sentence(paragraph: str) -> str:
    """Up to the first `.`, `:` or `;` followed by a space (or the end) outside parentheses and backquotes."""
    depth, quoted = 0, False
    for i, c in enumerate(paragraph):
        if c == "`":
            quoted = not quoted
        elif not quoted and c in "([":
            depth += 1
        elif not quoted and c in ")]":
            depth = max(depth - 1, 0)
        elif not quoted and depth == 0 and c in ".:;" and (i + 1 == len(paragraph) or paragraph[i + 1] == " "):
            if c == "." and paragraph[max(0, i - 3):i + 1] in ("e.g.", "i.e."):
                continue
            return paragraph[:i]
    return paragraph.rstrip(".:;")


def list_passes(available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """Every pass with the first line of its docstring; cortex's with their options too."""
    lines = ["cortex passes:"]
    for name, factory in sorted(cortex_passes().items()):
        try:
            cls = factory()
            lines.append(f"  {name}  {pass_summary(cls)} ({describe_options(cls)})")
        except Exception as e:  # a pass module that does not import yet
            lines.append(f"  {name}  (cannot be loaded: {type(e).__name__}: {e})")
    lines.append("xDSL passes:")
    for name in sorted(set(available) - set(cortex_passes())):
        try:
            summary = pass_summary(available[name]())
        except Exception:  # noqa: BLE001 - a pass whose module does not import here: list it bare
            summary = ""
        lines.append(f"  {name}  {summary}".rstrip())
    return "\n".join(lines) + "\n"


__all__ = ["bind_shapes_hint", "list_passes", "once_bound", "pass_summary", "semantic_reference"]
