"""Running a textual pass pipeline (`-p` syntax) from Python."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from cortex.ir import make_context
from cortex.passes.registry import all_passes


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply `pipeline` (e.g. "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place."""
    PassPipeline.parse_spec(all_passes(), pipeline).apply(make_context(), module)
    return module
