"""`cortex-specialize-mode{mode=power_save}`: runtime weights become constants.

Each `cortex.weight "wX"` of the mode's row is replaced by an f32 `arith.constant` holding the
mode's value for wX, from the built-in mode table (`cortex.semantics.modes`)
or from a JSON file `{mode: {weight: value}}` given as `table="path.json"`
(quoted: xDSL's pass-option syntax does not take a bare path). Runtime
inputs every mode shares (`INPUT_DEFAULTS`: the blur gate's threshold and
fraction) stay `cortex.weight`s unless the row names them.
On its own this changes nothing observable; it is what lets canonicalize
drop zero-weight fusion terms and DCE remove the stages that fed them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from cortex.dialects.state import WeightOp
from cortex.errors import CortexError
from cortex.semantics.modes import INPUT_DEFAULTS, UnknownModeError, load_modes, mode_weights


class SpecializeModeError(PassFailedException, CortexError):
    """A mode or weight the mode table does not have (reported as one line)."""


class WeightToConstant(RewritePattern):
    """cortex.weight "wX" → arith.constant <the mode's wX> : f32."""

    def __init__(self, weights: dict[str, float]):
        self.weights = weights

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: WeightOp, rewriter: PatternRewriter, /) -> None:
        if op.state_name in self.weights:  # runtime inputs (INPUT_DEFAULTS) stay inputs
            rewriter.replace(op, arith.ConstantOp(FloatAttr(self.weights[op.state_name], f32)))


def specialization_weights(mode: str | None, table: str | None = None) -> dict[str, float]:
    """The constants `cortex-specialize-mode` bakes in: `mode`'s row of the mode table (`table`, a JSON file, or
    the built-in one), or a SpecializeModeError naming what is wrong. No runtime-input defaults and no
    overrides: those are a call's (`semantics.modes.weights_for_call`)."""
    if not mode:
        raise SpecializeModeError("no mode given (use mode=<name>)")
    try:
        return mode_weights(mode, load_modes(table))
    except UnknownModeError as e:
        raise SpecializeModeError(str(e)) from None


def specialize_mode(
    module: ModuleOp, mode: str | None, table: str | None = None, listener: PatternRewriterListener | None = None
) -> None:
    """Replace every `cortex.weight` in `module` by the constant of `mode` (in place)."""
    weights = specialization_weights(mode, table)
    names = sorted({op.state_name for op in module.walk() if isinstance(op, WeightOp)})
    missing = [n for n in names if n not in weights and n not in INPUT_DEFAULTS]
    if missing:
        raise SpecializeModeError(
            f"mode '{mode}' has no weight{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(n) for n in missing)} "
            f"(it has: {', '.join(sorted(weights))})"
        )
    PatternRewriteWalker(
        WeightToConstant(weights), apply_recursively=False, listener=listener or PatternRewriterListener()
    ).rewrite_module(module)


def specialize_weights(module: ModuleOp, weights: dict[str, float]) -> None:
    """Replace each `cortex.weight` that `weights` names by its value (in place); others stay."""
    PatternRewriteWalker(WeightToConstant(weights), apply_recursively=False).rewrite_module(module)


@dataclass(frozen=True)
class SpecializeModePass(ModulePass):
    """Replace runtime weights by the constants of one mode (`mode=`, optional `table=`)."""

    name = "cortex-specialize-mode"

    mode: str | None = None
    table: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specialize_mode(op, self.mode, self.table)


def parse_weight_values(text: str) -> dict[str, float]:
    """`"wc=0.5,wt=0.25"` as {"wc": 0.5, "wt": 0.25}, or a SpecializeModeError naming the bad entry."""
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, number = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            values[name.strip()] = float(number)
        except ValueError:
            raise SpecializeModeError(f"cortex-specialize-weights: '{item}' is not name=number") from None
    return values


def weight_values_text(values: Mapping[str, float]) -> str:
    """{"wc": 0.5, "wt": 0.25} as `"wc=0.5,wt=0.25"` (sorted; each float exactly, as `repr` writes it):
    `parse_weight_values`' input, the `weights` option of `cortex-specialize-weights`."""
    return ",".join(f"{name}={float(value)!r}" for name, value in sorted(values.items()))


@dataclass(frozen=True)
class SpecializeWeightsPass(ModulePass):
    """`cortex-specialize-weights{weights="wc=0.5,wt=0.25"}`: the named weights become constants, others stay
    runtime inputs — the step `cortex.compile` bakes a call's weights with (its mode's row and overrides)."""

    name = "cortex-specialize-weights"

    weights: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specialize_weights(op, parse_weight_values(self.weights))
