"""xDSL's `ImplicitBuilder`, made safe for many threads at once.

`ImplicitBuilder` keeps the current builder per thread, but to make new ops
find it, it swaps `Operation.__post_init__` -- one attribute of one class,
shared by every thread -- on entering the outermost `with` of a thread and
swaps the saved one back on leaving. Two threads interleave those swaps:
thread B saves A's wrapper, A restores the original, B restores A's wrapper,
and from then on every op is inserted twice ("Can't add to a block an
operation already attached to a block"), or not at all. Cortex's lowering,
its ONNX import and its example builders use `ImplicitBuilder`, and so does
xDSL itself (linalg's hidden regions), so `cortex.compile` from 8 threads
failed every run.

The fix: `install()` (called by `cortex.dialects`, before any op is built) puts the hook in once and makes xDSL's "install" hand
back that same hook, so its save/restore pair becomes a no-op. What a new op
does is then decided by the thread-local builder alone. The hook costs one
thread-local read per op created, outside any `with` too.
"""

from __future__ import annotations

import threading

from xdsl import builder as xdsl_builder
from xdsl.ir import Operation

_lock = threading.Lock()


def install() -> None:
    """Patch xDSL (idempotent): its per-`with` swap of the shared `Operation.__post_init__` races between threads."""
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
