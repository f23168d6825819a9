"""Running a textual pass pipeline (`-p` syntax) from Python."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from cortex.ir import CortexError, make_context, verify_located
from cortex.passes.registry import all_passes


def build_pipeline(pipeline: str) -> PassPipeline:
    """The pass instances of `pipeline`, or a CortexError naming what is wrong with it."""
    if not isinstance(pipeline, str):
        raise CortexError(f"a pass pipeline is a string like 'canonicalize,cse', got {type(pipeline).__name__}")
    available = all_passes()
    try:
        specs = list(parse_pipeline(pipeline))
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        last = [line.strip() for line in str(e).splitlines() if line.strip()]
        raise CortexError(f"invalid pass pipeline '{pipeline}': {last[-1] if last else e}") from None
    passes = []
    for spec in specs:
        if spec.name not in available:
            raise CortexError(f"unknown pass '{spec.name}' in pipeline '{pipeline}'")
        try:
            passes.append(available[spec.name]().from_pass_spec(spec))
        except (ValueError, TypeError) as e:
            raise CortexError(f"invalid options for pass '{spec.name}': {e}") from None
    return PassPipeline(tuple(passes))


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply `pipeline` (e.g. "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place.

    The passes run on a clone, which replaces the module's body only when
    every pass succeeded: a failed pipeline leaves `module` as it was.
    """
    if not isinstance(module, ModuleOp):
        raise CortexError(f"run_passes takes a builtin.module, got {type(module).__name__}")
    passes = build_pipeline(pipeline)
    verify_located(module)  # passes assume verified IR (dominance, yields, ...)
    work = module.clone()
    ctx = make_context()
    for p in passes.passes:
        try:
            p.apply(ctx, work)
        except CortexError:
            raise
        except DiagnosticException as e:
            raise CortexError(" ".join(str(e).split())) from None
        except Exception as e:  # a bug in the pass (or an xDSL pass meeting IR it does not handle)
            detail = " ".join(str(e).split())
            raise CortexError(f"internal error: pass '{p.name}' crashed: {type(e).__name__}: {detail}") from e
    for block in list(module.body.blocks):
        module.body.detach_block(block).erase(safe_erase=False)
    work.body.move_blocks(module.body)
    module.attributes = dict(work.attributes)
    module.properties = dict(work.properties)
    return module
