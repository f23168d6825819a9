"""What the reference interpreter and the compiled runtime share at the call boundary.

Both runners take the same arguments (module, entry, mode, weights) and
must reject the same mistakes with the same words: an unknown entry, an
unknown mode, a weight that is not a number, an argument of the wrong type;
and both start a state from the same zeros.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from cortex.deprecation import moved_module
from cortex.dialects.abi import ValueSpec, value_spec
from cortex.errors import CortexError
from cortex.ir import function_named, functions
from cortex.runtime import values


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    """The function `@entry` with a body, or a CortexError listing those there are."""
    found = function_named(module, entry)
    if found is not None:
        return found
    names = ", ".join(f.sym_name.data for f in functions(module)) or "none"
    raise CortexError(f"no function '@{entry}' in the module (functions: {names})")


def resolve_entry(module: ModuleOp, entry: str | None) -> str:
    """`entry`, checked to exist; None: the module's only public function with a body, or a CortexError
    listing the functions to choose from (a compiler has no favourite entry name)."""
    if entry is not None:
        if not isinstance(entry, str):
            raise CortexError(f"entry must be a function name, got {entry!r:.60}")
        find_entry(module, entry)
        return entry
    defined = functions(module)
    public = [f for f in defined if f.sym_visibility is None or f.sym_visibility.data == "public"]
    if len(public) == 1:
        return public[0].sym_name.data
    names = ", ".join(f"@{f.sym_name.data}" for f in (public or defined)) or "none"
    which = "no public function with a body" if not public else f"{len(public)} public functions"
    raise CortexError(f"the module has {which} ({names}): say which to run with entry=...")


def entry_function(module: ModuleOp, entry: str | None) -> func.FuncOp:
    """The function `resolve_entry` picks: the one home of that rule for the runners, the passes and the tools."""
    return find_entry(module, resolve_entry(module, entry))


# ---------------------------------------------------------------- values at the boundary
# The checks live in `cortex.runtime.values` (the compiled runtime runs without IR); these take MLIR types.


@functools.lru_cache(maxsize=256)
def _spec(type_: Attribute, unsigned: bool) -> ValueSpec:
    return value_spec(type_, unsigned)


def describe_type(type_: Attribute, unsigned: bool = False) -> str:
    """What a caller must pass for `type_`: `a uint8 array of shape (480, 640, 3)`, `an f32 scalar`.

    `unsigned` marks lowered `i8` data the caller exchanges as uint8 (`{cortex.unsigned}`).
    """
    return values.describe_type(_spec(type_, unsigned))


def check_value(type_: Attribute, value: Any, what: str, unsigned: bool = False) -> Any:
    """`value` as an argument of type `type_` (see `cortex.runtime.values.check_value`)."""
    return values.check_value(_spec(type_, unsigned), value, what)


def initial_zeros(type_: Attribute, what: str, unsigned: bool = False) -> Any:
    """The value a state holds before the first frame: zeros of its type."""
    return values.initial_zeros(_spec(type_, unsigned), what)


if not TYPE_CHECKING:  # moved to the mode table's module, kept here for one release
    __getattr__ = moved_module(__name__, "cortex.semantics.modes", frozenset({"weights_for_call"}))
