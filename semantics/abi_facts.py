"""The plain facts of the lowered-module ABI: attribute names, ports and wiring keys, without xDSL.

The lowering writes these names and the runtime reads them back from a saved
program, so they live once, here, below both: the runtime loads and runs a
program where neither xDSL nor the dialect can be imported. What reads or
writes the IR itself (an extern's properties, the entry function's ports)
is `cortex.dialects.abi`, which imports these names from here; its module
docstring describes the lowered module as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from cortex.errors import CortexError

ORIGIN = "cortex.origin"
"""On every op the lowering inserts at function level: the source op's SSA name (or op name)."""
STATE = "cortex.state"
"""On an entry argument/result: the name of the frame state it carries."""
WEIGHT = "cortex.weight"
"""On an entry argument: the name of the runtime weight it carries."""
UNSIGNED = "cortex.unsigned"
"""On an `i8` argument/result: the data is uint8 (MLIR's arith has no unsigned types)."""
EXTERN = "cortex.extern"
"""On a private declaration: the cortex op (and kernel) it stands for."""
PROPS = "cortex.props"
"""On an extern declaration: the op's properties, defaults filled in, as the kernel's keyword arguments."""
SEGMENT = "cortex.segment"
"""On a function `cortex-outline-segments` made: a run of extern-free ops a native backend (IREE) compiles."""


# ---------------------------------------------------------------- the entry's ports


@dataclass(frozen=True)
class ValueSpec:
    """What one argument or result is, as the runtime checks and converts it: plain data, no xDSL.

    The runtime (`cortex.runtime`) reads programs without the compiler, so a
    port carries its type as NumPy facts; `type` keeps the MLIR spelling for
    messages ("an f32 scalar", "tensor<?xi8>").
    """

    type: str  # the MLIR spelling: "tensor<96x128x3xi8>", "f32"
    dtype: str | None  # NumPy dtype of the element as the generated code computes it; None: no NumPy dtype
    shape: tuple[int, ...] | None  # None: a scalar; -1: a dynamic size
    unsigned: bool = False  # i8 data the caller exchanges as uint8 ({cortex.unsigned})

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None


@dataclass(frozen=True)
class Port:
    """One argument or result of the lowered entry function, as a runner sees it."""

    index: int
    kind: str  # "input" | "state" | "weight" | "output"
    name: str  # state/weight name, the argument's SSA name, or "#i" for a result
    spec: ValueSpec

    @property
    def unsigned(self) -> bool:
        return self.spec.unsigned


# ---------------------------------------------------------------- wiring between the parts of a split entry


SPLIT_ARGS = "cortex.split_args"
"""On a part of a split entry (frame split, stage split): the wiring key of each argument, in order."""
SPLIT_RESULTS = "cortex.split_results"
"""On a part of a split entry: the wiring key of each result, in order."""

STAGE_KINDS = ("stage", "ahead")
"""The kinds of the values one stage hands to another stage of the same part (the parallel part's, the delayed
part's): never a part's own argument or result."""

WIRE_KINDS = ("input", "state", "update", "output", "weight", "value", *STAGE_KINDS)
"""What a wiring key names: the entry's input #i, a state's value before the frame (`state:x`) and after it
(`update:x`), the entry's output #i, a runtime weight, a value one frame-split part hands to a later one
(`value:k`), a value one stage hands to another (`stage:k`), and one stage of the delayed part (which runs
ahead of the frame's other parts) to another (`ahead:k`)."""

_NUMBERED = frozenset({"input", "output", "value", *STAGE_KINDS})

FRAME_PARTS = ("delayed", "parallel", "recurrence", "tail")
"""The frame split's parts (`@f__delayed`, ...), in the order one frame runs them."""


@dataclass(frozen=True)
class WireKey:
    """One wiring key, parsed: `WireKey.parse("state:prev_gray")`, `str(key)` gives the text back."""

    kind: str
    ident: str  # a number for input/output/value/stage, a name for state/update/weight

    @classmethod
    def parse(cls, text: str) -> WireKey:
        kind, sep, ident = text.partition(":")
        if not sep or kind not in WIRE_KINDS or not ident:
            raise CortexError(f"bad wiring key '{text}': expected <kind>:<id> with kind one of {', '.join(WIRE_KINDS)}")
        if kind in _NUMBERED and not ident.isdigit():
            raise CortexError(f"bad wiring key '{text}': '{kind}' keys are numbered ({kind}:0, {kind}:1, ...)")
        return cls(kind, ident)

    @property
    def number(self) -> int:
        return int(self.ident)

    def __str__(self) -> str:
        return f"{self.kind}:{self.ident}"


def wire(kind: str, ident: int | str) -> str:
    """The text of a wiring key (checked): `wire("value", 3)` == "value:3"."""
    return str(WireKey.parse(f"{kind}:{ident}"))


__all__ = [
    "EXTERN",
    "FRAME_PARTS",
    "ORIGIN",
    "PROPS",
    "SEGMENT",
    "SPLIT_ARGS",
    "SPLIT_RESULTS",
    "STAGE_KINDS",
    "STATE",
    "UNSIGNED",
    "WEIGHT",
    "WIRE_KINDS",
    "Port",
    "ValueSpec",
    "WireKey",
    "wire",
]
