"""Every place Cortex changes xDSL's own behaviour, each naming the xDSL behaviour it works around.

`install()` (called by `cortex.dialects`, before any op is built) puts in the patches every Cortex process
needs; `install_linear_time_lexer()` is for a plain `xdsl-opt` process that loads `cortex.universe`. Each is
idempotent, and each is pinned by tests/test_xdsl_patches.py (remove one and its test fails). Cortex's
subclasses of xDSL classes (`cortex.ir`'s lexer, parser and printer) override methods instead and patch nothing.

1. `ImplicitBuilder` and threads. xDSL keeps the current builder per thread, but to make new ops find it,
   it swaps `Operation.__post_init__` (through the private `_override_operation_post_init` and
   `_op_init_callback`) -- one attribute of one class, shared by every thread -- on entering the outermost
   `with` of a thread and swaps the saved one back on leaving. Two threads interleave those swaps: thread
   B saves A's wrapper, A restores the original, B restores A's wrapper, and from then on every op is
   inserted twice ("Can't add to a block an operation already attached to a block"), or not at all.
   Cortex's lowering, its ONNX import and its example builders use `ImplicitBuilder`, and so does xDSL
   itself (linalg's hidden regions), so `cortex.compile` from 8 threads failed every run. The fix puts the
   hook in once and makes xDSL's "install" hand back that same hook, so its save/restore pair becomes a
   no-op; what a new op does is then decided by the thread-local builder alone (one thread-local read per
   op created, outside any `with` too).
2. `DenseIntOrFPElementsAttr.is_splat` compares elements with ==, so dense<[-0.0, 0.0]> printed as one
   -0.0 splat: the patch compares bits.
3. xDSL's string-literal pattern (`MLIRLexer._unescaped_characters_regex`) backtracks in time exponential
   in the rest of its line on an unterminated string; `STRING_LITERAL` accepts the same language and fails
   in linear time. `cortex.ir`'s lexer uses it; a plain `xdsl-opt` gets it when it loads the plugin.
"""

from __future__ import annotations

import re
import threading

from xdsl import builder as xdsl_builder
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation
from xdsl.utils.mlir_lexer import MLIRLexer

STRING_BODY = r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*'
STRING_LITERAL = re.compile(STRING_BODY + '"')
STRING_PREFIX = re.compile(STRING_BODY)

_lock = threading.Lock()


def install_builder_hook() -> None:
    """Patch 1: the shared `Operation.__post_init__` hook put in once (xDSL's per-`with` swap races)."""
    with _lock:
        if getattr(Operation.__post_init__, "cortex_permanent_hook", False):
            return
        original = Operation.__post_init__

        def post_init(op: Operation) -> None:
            original(op)
            xdsl_builder._op_init_callback(op)  # inserts only when this thread has an implicit builder

        post_init.cortex_permanent_hook = True  # type: ignore[attr-defined]
        Operation.__post_init__ = post_init  # type: ignore[method-assign]
        xdsl_builder._override_operation_post_init = lambda: post_init


def _is_splat_by_bits(self: DenseIntOrFPElementsAttr) -> bool:
    """Every element has the same bits (xDSL compares with ==, so [-0.0, 0.0] printed as dense<-0.0>)."""
    data = self.data.data
    size = len(data) // max(len(self), 1)
    return size == 0 or data == data[:size] * (len(data) // size)


def install_splat_by_bits() -> None:
    """Patch 2: `is_splat` by bits (xDSL's == makes dense<[-0.0, 0.0]> a -0.0 splat)."""
    DenseIntOrFPElementsAttr.is_splat = _is_splat_by_bits  # type: ignore[method-assign]


def install_linear_time_lexer() -> None:
    """Patch 3: xDSL's own lexer gets `STRING_LITERAL` (its pattern backtracks exponentially on an
    unterminated string); for `xdsl-opt`, whose one hook is the plugin's load."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL


def install() -> None:
    """The patches every Cortex process needs (1 and 2), before any op is built."""
    install_builder_hook()
    install_splat_by_bits()


__all__ = ["STRING_LITERAL", "STRING_PREFIX", "install", "install_linear_time_lexer"]
