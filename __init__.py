"""Cortex: a multi-level compiler for the ROI-scoring pipeline of a video encoder.

The Python API:

    module = cortex.parse(cortex.examples.L2_PIPELINE)       # the bundled pipeline, or MLIR text
    module = cortex.build_l2_pipeline(720, 1280)              # any frame size
    runner = cortex.reference(module, entry="l2_frame", mode="balanced")
    encoded, score = runner(frame)                            # runner.state, runner.reset()
    compiled = cortex.compile(module, mode="power_save")      # same call shape, NumPy backend,
                                                              # specialised to the mode
    compiled.save("l2.cortex"); again = cortex.load("l2.cortex")  # a compiled program on disk
    lowered = cortex.lower(module)                            # upstream linalg/arith/func IR
    source = cortex.emit_numpy(lowered)                       # the generated Python
    module = cortex.from_onnx("model.onnx")                   # ONNX in: one func.func @main
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from cortex.errors import CortexError

if TYPE_CHECKING:  # what a type checker sees of the lazily imported API below: its real signatures
    from cortex.driver import calibrate as calibrate
    from cortex.driver import compile as compile
    from cortex.driver import emit_numpy as emit_numpy
    from cortex.driver import lower as lower
    from cortex.driver import quantize as quantize
    from cortex.driver import reference as reference
    from cortex.driver import run_passes as run_passes
    from cortex.examples.l2_pipeline import build_l2_pipeline as build_l2_pipeline
    from cortex.frontends.onnx import from_onnx as from_onnx
    from cortex.ir import make_context as make_context
    from cortex.ir import parse as parse
    from cortex.ir import to_text as to_text
    from cortex.options import CompileOptions as CompileOptions
    from cortex.options import compile_pipeline_text as compile_pipeline_text
    from cortex.runtime.pipeline import load as load

_API_HOMES = {
    "CompileOptions": "cortex.options",
    "compile_pipeline_text": "cortex.options",
    "build_l2_pipeline": "cortex.examples.l2_pipeline",
    "calibrate": "cortex.driver",
    "compile": "cortex.driver",
    "emit_numpy": "cortex.driver",
    "from_onnx": "cortex.frontends.onnx",
    "load": "cortex.runtime.pipeline",
    "lower": "cortex.driver",
    "make_context": "cortex.ir",
    "parse": "cortex.ir",
    "quantize": "cortex.driver",
    "reference": "cortex.driver",
    "run_passes": "cortex.driver",
    "to_text": "cortex.ir",
}
"""Where each API name lives; imported on first use, so `import cortex.errors` (or a
kernel, or video input) does not load the whole compiler."""


_SUBMODULES = frozenset({"examples"})
"""Subpackages reachable as attributes (`cortex.examples.L2_PIPELINE`) without importing them first."""


def package_version() -> str:
    """The version pyproject.toml declares: from the installed package's metadata, or read from
    pyproject.toml itself when this source tree is not what is installed (a checkout on PYTHONPATH)."""
    from importlib.metadata import PackageNotFoundError, distribution
    from pathlib import Path

    here = Path(__file__).resolve().parent
    try:
        dist = distribution("cortex")
        origin = dist.read_text("direct_url.json") or ""
        if dist.version and ("file://" not in origin or here.as_uri() in origin or not (here / "pyproject.toml").exists()):
            return dist.version
    except PackageNotFoundError:
        pass
    try:
        import tomllib

        return str(tomllib.loads((here / "pyproject.toml").read_text())["project"]["version"])
    except (ImportError, OSError, KeyError, ValueError):
        return "unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return package_version()
    if name in _SUBMODULES:
        return import_module(f"cortex.{name}")
    home = _API_HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cortex' has no attribute '{name}'")
    return getattr(import_module(home), name)


__all__ = ["CortexError", "examples", *_API_HOMES]
