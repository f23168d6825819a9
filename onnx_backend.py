"""ONNX's backend interface (`onnx.backend.base.Backend`) over Cortex.

    import cortex.onnx_backend as backend
    rep = backend.prepare(model)                      # the compiled NumPy backend
    outputs = rep.run([x])                            # or backend.run_model(model, [x])
    rep = backend.ReferenceBackend.prepare(model)     # the reference interpreter
    rep = backend.prepare(model, backend="iree")      # native code through IREE (device "CPU" or "CUDA")

`prepare`/`run_model`/`run_node`/`supports_device` at module level are the
compiled backend's, as ONNX's runner conventions expect of a backend module;
`runner="reference"` (or `ReferenceBackend`) picks the interpreter instead.

Cortex shapes are static, so an integer graph input read as a shape or axes
is bound to its value: `prepare` defers compiling such a model, and `run`
compiles it once per distinct value of those inputs (cached).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import onnx
from onnx.backend.base import Backend, BackendRep
from xdsl.dialects.builtin import ModuleOp

from cortex.backends.backend import BACKENDS, backend_named
from cortex.driver import compile_loaded, reference
from cortex.errors import CortexError
from cortex.frontends.onnx import ENTRY, from_onnx, load_model
from cortex.frontends.onnx.context import ELEMENTS
from cortex.frontends.onnx.table import import_time_inputs, typed_only_inputs
from cortex.lowering import POST_LOWERING_PASSES

RUNNERS = ("compiled", "reference")
"""How a prepared model runs: compiled to NumPy (`cortex.compile`) or in the reference interpreter."""
COMPILE_PASSES = f"cortex-conv-im2col,cortex-unroll-pooling,cortex-fold-constant-layouts,{POST_LOWERING_PASSES}"
"""The post-lowering passes the compiled runner runs: convolutions as one im2col matrix product each,
small pooling windows unrolled into elementwise maxima (sums), broadcasts and transposes of constants
done at compile time, then the default post-lowering slot (elementwise fusion). The IREE backend chooses
its own layout (`cortex.backends.backend`) and needs none of these: it does its own."""
POST_PASSES = {name: None if b.native_tensor_code else COMPILE_PASSES for name, b in BACKENDS.items()}
"""The post-lowering passes of an imported graph, per backend (None: the backend's default)."""


class GraphRunner(Protocol):
    """What a prepared model calls: a compiled pipeline or the reference interpreter (graph inputs in order)."""

    def __call__(self, *inputs: Any) -> tuple[Any, ...]: ...


StaticKey = tuple[tuple[str, str, tuple[int, ...], bytes], ...]
"""The integer inputs a runner was specialised to: (name, dtype, shape, bytes) each, sorted by name."""


def output_dtype(info: onnx.ValueInfoProto) -> np.dtype:
    """The NumPy dtype a graph output is returned as: its declared element type, float32 when undeclared."""
    elem = info.type.tensor_type.elem_type if info.type.HasField("tensor_type") else 0
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)) if elem in ELEMENTS else np.dtype(np.float32)


def _make_runner(module: ModuleOp, runner: str, backend: str = "numpy", device: str = "CPU") -> GraphRunner:
    if runner == "reference":
        return reference(module, entry=ENTRY, mode=None)
    return compile_loaded(module, entry=ENTRY, mode=None, post_passes=POST_PASSES[backend], backend=backend,
                            device=device.lower())


class CortexRep(BackendRep):
    """A prepared model: `run(inputs)` returns the graph outputs, in order."""

    def __init__(self, model: onnx.ModelProto, runner: str = "compiled", backend: str = "numpy", device: str = "CPU"):
        if runner not in RUNNERS:
            raise CortexError(f"unknown runner '{runner}' (runners: {', '.join(RUNNERS)})")
        backend_named(backend)
        self.model = model
        self.runner = runner
        self.backend, self.device = backend, device
        initialized = {i.name for i in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initialized]
        self.output_names = [o.name for o in model.graph.output]
        # Integer inputs are shapes/axes to the importer, and so are the inputs its operators read at import
        # time (Resize's scales, Pad's value): their values specialise the compiled module.
        read_now = import_time_inputs(model.graph)
        run_time = typed_only_inputs(model.graph) - read_now  # Cast's and Where's integer data: arguments
        self.static_inputs = {
            i.name
            for i in model.graph.input
            if i.name not in initialized
            and i.type.HasField("tensor_type")
            and (i.type.tensor_type.elem_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) or i.name in read_now)
            and i.name not in run_time
        }
        self.output_dtypes = [output_dtype(o) for o in model.graph.output]
        self._runners: dict[StaticKey, GraphRunner] = {}
        if not self.static_inputs:
            self._runner({})  # compile now: errors surface at prepare time

    def _runner(self, static: Mapping[str, np.ndarray]) -> GraphRunner:
        key: StaticKey = tuple((name, value.dtype.str, value.shape, value.tobytes()) for name, value in sorted(static.items()))
        if key not in self._runners:
            self._runners[key] = _make_runner(from_onnx(self.model, static), self.runner, self.backend, self.device)
        return self._runners[key]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if type(inputs) is not list and isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise CortexError(f"missing graph input(s): {', '.join(missing)}")
            values = [inputs[n] for n in self.input_names]
        else:
            values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(values) != len(self.input_names):
                raise CortexError(f"the model takes {len(self.input_names)} input(s), got {len(values)}")
        if self.static_inputs:
            static = {n: np.asarray(v) for n, v in zip(self.input_names, values) if n in self.static_inputs}
            args = [np.asarray(v) for n, v in zip(self.input_names, values) if n not in self.static_inputs]
            outputs = self._runner(static)(*args)
        else:
            # the runner checks (or converts) each value; a NumPy scalar is a rank-0 array to it
            outputs = self._runners[()](*[np.asarray(v) if isinstance(v, np.generic) else v for v in values])
        return tuple(o if type(o) is np.ndarray and o.dtype == d else np.asarray(o, dtype=d)
                     for o, d in zip(outputs, self.output_dtypes))


class CortexBackend(Backend):
    """`runner` chooses the compiled backend (default) or the reference interpreter; `backend` the compiled
    backend's code: "numpy" (default) or "iree" (native code; device "CPU", or "CUDA" for an NVIDIA GPU)."""

    runner = "compiled"
    backend = "numpy"

    @classmethod
    def prepare(cls, model: onnx.ModelProto | str | bytes, device: str = "CPU", runner: str | None = None,
                backend: str | None = None, **kwargs: Any) -> CortexRep:
        target = backend_named(backend or cls.backend)
        if not isinstance(device, str) or device.lower() not in target.devices:
            others = [b.name for b in BACKENDS.values() if isinstance(device, str) and device.lower() in b.devices]
            also = f"; backend='{others[0]}' runs there" if others else ""
            raise CortexError(f"device '{device}' is not supported (the {target.name} backend runs on "
                              f"{', '.join(d.upper() for d in target.devices)}{also})")
        backend = target.name
        return CortexRep(load_model(model), runner or cls.runner, backend, device)

    @classmethod
    def run_model(cls, model: onnx.ModelProto | str | bytes, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU", outputs_info: Sequence[tuple[npt.DTypeLike, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[np.ndarray, ...]:
        """One node as a one-node model over `inputs` (their arrays give the input types)."""
        arrays = [np.asarray(v) for v in (inputs.values() if isinstance(inputs, Mapping) else inputs)]
        names = [n for n in node.input if n]
        graph_inputs = [
            onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(names, arrays)
        ]
        outputs = [onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o]
        graph = onnx.helper.make_graph([node], "node", graph_inputs, outputs)
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.run_model(model, arrays, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return isinstance(device, str) and device.lower() in BACKENDS[cls.backend].devices


class CompiledBackend(CortexBackend):
    runner = "compiled"


class ReferenceBackend(CortexBackend):
    runner = "reference"


class IreeBackend(CortexBackend):
    """The compiled backend on IREE (`backend="iree"`): `IreeBackend.prepare(model, device="CUDA")`."""

    backend = "iree"


prepare = CompiledBackend.prepare
run_model = CompiledBackend.run_model
run_node = CompiledBackend.run_node
supports_device = CompiledBackend.supports_device

__all__ = ["CompiledBackend", "CortexBackend", "CortexRep", "IreeBackend", "ReferenceBackend", "prepare", "run_model", "run_node", "supports_device"]
