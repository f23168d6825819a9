"""Former names kept for one release: each use warns (a DeprecationWarning naming the new name), then works.

The one mechanism behind every renamed function, class, module, keyword and command-line spelling:

    compile_pipeline = renamed_function("cortex.driver.compile_pipeline", compile_loaded)
    __getattr__ = renamed_attributes(__name__, {"Stage": "StageNode"})   # a module's former names
    __getattr__ = moved_module(__name__, "cortex.semantics.modes")      # a module's former path
    warn_renamed("cortex.compile(workers=)", "compiled.stage_threads")     # anything else, where it is used
    print(f"warning: {renamed_message('--backend reference', '--runner reference')}", file=sys.stderr)  # a tool

A renamed name is left out of its module's `__all__`, and the code of this package uses only the new names
(a test of each alias checks that it warns and behaves as the new name does).
"""

from __future__ import annotations

import functools
import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

class _Omitted:
    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()
"""The default of a deprecated keyword: told apart from every value a caller may pass (None included)."""


def renamed_message(old: str, new: str) -> str:
    """The one wording: `old is deprecated: use new` (a command line prints it as its warning)."""
    return f"{old} is deprecated: use {new}"


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that `old` is deprecated and `new` replaces it; `stacklevel` 3 points at the caller of the function
    that calls this."""
    warnings.warn(renamed_message(old, new), DeprecationWarning, stacklevel=stacklevel)


def renamed_function(old: str, new: F) -> F:
    """`new` under its former (dotted) name `old`: each call warns at its call site, then calls `new`."""
    @functools.wraps(new)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warn_renamed(old, new.__name__)
        return new(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old.rpartition(".")[2]
    return alias  # type: ignore[return-value]  # same signature as `new` (functools.wraps)


def renamed_attributes(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module's `__getattr__` (PEP 562) for its former names: `names` maps each to the name that replaced
    it in the same module; reading a former name warns and gives the new one's object."""
    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_renamed(f"{module}.{name}", f"{module}.{new}")
        return getattr(sys.modules[module], new)
    return __getattr__


def moved_module(old: str, new: str, names: frozenset[str] | None = None) -> Callable[[str], Any]:
    """The `__getattr__` of a module left at its former path `old` for one release: reading a name there warns
    and gives module `new`'s (an unknown name is an AttributeError, as before). With `names`, only those moved
    (the module `old` still defines the rest)."""
    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (names is not None and name not in names):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(new), name)
        warn_renamed(f"{old}.{name}", f"{new}.{name}")
        return value
    return __getattr__


__all__ = ["OMITTED", "moved_module", "renamed_attributes", "renamed_function", "renamed_message", "warn_renamed"]
