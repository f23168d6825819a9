"""The IREE backend: a lowered module's compilable parts as machine code, the rest as the NumPy backend's Python.

    compiled = cortex.compile(module, backend="iree")                 # CPU (llvm-cpu, local-sync)
    compiled = cortex.compile(module, backend="iree", device="cuda")  # an NVIDIA GPU

`IreeProgram(lowered, device)`: `cortex-outline-segments` cuts the lowered
module into segment functions (runs of extern-free linalg/tensor/arith/
math/scf ops) called from the rest; the segments become the functions of
ONE IREE module (compiled once, cached on disk: `cortex.backends.
iree.compiler`), loaded once (`cortex.runtime.iree_runtime`; a compiled program carries it as an
"iree" executable, `iree_executable`, loaded by `cortex.runtime.iree_executable`); the rest —
extern calls (OpenCV), state threading, the small scalar glue — is emitted
by the NumPy emitter exactly as for the NumPy backend, and `bind` points
the generated code's segment functions at the compiled ones. So everything
the NumPy backend does around a call (argument checks, unsigned views,
state, profiling by source op, the engines) holds unchanged; a tensor graph
without externs is one segment, one call into IREE per frame.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.target import Target

from cortex.backends.iree.compiler import DEVICES, compile_module, legalized_for, target_named
from cortex.backends.iree.outline_segments import MIN_INTENSITY, MIN_WORK, outline_segments
from cortex.backends.numpy.emitter import numpy_executable
from cortex.dialects.abi import SEGMENT
from cortex.errors import CortexError
from cortex.ir import to_text
from cortex.runtime.iree_executable import SEGMENTS, VMFB
from cortex.runtime.iree_runtime import LoadedModule, cpu_driver
from cortex.runtime.native_report import CHOICES, COST_RULE, RunChoice
from cortex.runtime.program import Executable


def check_device(device: str) -> None:
    """A CortexError for a device IREE's targets here do not know (`cortex.backends.backend` lists them too)."""
    if device not in DEVICES:
        raise CortexError(f"unknown device {device!r:.40} for the iree backend (devices: {', '.join(DEVICES)})")


def segment_module(segments: list[func.FuncOp]) -> ModuleOp:
    """The module IREE compiles: the segments, public (IREE drops private functions nobody calls)."""
    copies = []
    for segment in segments:
        copy = segment.clone()
        copy.sym_visibility = None
        copy.attributes.pop(SEGMENT, None)
        copies.append(copy)
    return ModuleOp(copies)


def segment_rule() -> tuple[float, int]:
    """(min_intensity, min_work) of the outlining cost rule (`cortex.backends.iree.outline_segments`): the pass's
    measured defaults, or CORTEX_IREE_MIN_INTENSITY / CORTEX_IREE_MIN_WORK (0 and 0: every run with a linalg
    op goes to IREE, as the tests of small programs need)."""
    values: list[float] = []
    for name, default in (("CORTEX_IREE_MIN_INTENSITY", MIN_INTENSITY), ("CORTEX_IREE_MIN_WORK", MIN_WORK)):
        text = os.environ.get(name, "")
        try:
            value = float(text) if text else float(default)
        except ValueError:
            raise CortexError(f"{name}='{text}' is not a number") from None
        if value < 0:
            raise CortexError(f"{name}='{text}' is negative")
        values.append(value)
    return values[0], int(values[1])


class IreeProgram:
    """A lowered module as host code + one compiled IREE module of its segments."""

    def __init__(self, lowered: ModuleOp, device: str = "cpu", target: str | None = None, load: bool = True):
        """`target` overrides the device's (e.g. "cpu-portable"); `load=False` compiles only (the device
        check compiles here for a GPU it does not have)."""
        check_device(device)
        self.target = target_named(target or DEVICES[device])
        self.host = lowered.clone()
        min_intensity, min_work = segment_rule()
        self.rule = {"min_work": min_work, "min_intensity": min_intensity}
        self.choices: list[RunChoice] = []  # what the cost rule made of each run it weighed
        self.segments = outline_segments(self.host, min_intensity=min_intensity, min_work=min_work, choices=self.choices)
        self.loaded: LoadedModule | None = None
        self.vmfb: bytes | None = None
        if self.segments:
            self.vmfb = compile_module(segment_module(self.segments), self.target)
            if not load:
                return
            # CORTEX_IREE_THREADS / CORTEX_IREE_DRIVER: IREE's own threads for one big call (a CPU target's code
            # runs on either driver); local-sync, the default, is cheaper per call and the engines bring the threads.
            driver, threads = cpu_driver(self.target.driver) if self.target.driver.startswith("local") else (self.target.driver, None)
            self.loaded = LoadedModule(self.vmfb, driver, threads)

    @property
    def segment_names(self) -> list[str]:
        return [s.sym_name.data for s in self.segments]

    def signatures(self) -> dict[str, dict[str, list[str]]]:
        """Each segment's argument and result types as text (what a saved module needs to be called)."""
        return {
            s.sym_name.data: {"args": [str(t) for t in s.function_type.inputs.data],
                              "results": [str(t) for t in s.function_type.outputs.data]}
            for s in self.segments
        }

    def bind(self, functions: dict[str, str], namespace: dict[str, Any]) -> None:
        """Point the generated code's segment functions (symbol → Python name in `namespace`) at the compiled ones."""
        if self.loaded is None:
            return
        for segment in self.segments:
            symbol = segment.sym_name.data
            if symbol not in functions:
                continue
            kind = segment.function_type
            namespace[functions[symbol]] = self.loaded.function(symbol, list(kind.inputs.data), list(kind.outputs.data))

    def whole_functions(self) -> dict[str, str]:
        """Host function → the segment that is all of it (what the loader may call directly)."""
        names = [op.sym_name.data for op in self.host.ops if isinstance(op, func.FuncOp)]
        return {name: segment for name in names if (segment := self.whole_entry(name)) is not None}

    def whole_entry(self, entry: str) -> str | None:
        """The segment that is all of `entry` (a tensor graph: the entry only calls it and returns), or None."""
        fn = next((op for op in self.host.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None or not fn.body.blocks:
            return None
        body = list(fn.body.block.ops)
        if len(body) != 2 or not isinstance(body[0], func.CallOp) or not isinstance(body[1], func.ReturnOp):
            return None
        callee = body[0].callee.root_reference.data
        whole = list(body[0].arguments) == list(fn.body.block.args) and list(body[1].arguments) == list(body[0].res)
        return callee if whole and callee in self.segment_names else None


def iree_executable(lowered: ModuleOp, label: str, device: str = "cpu") -> Executable:
    """The "iree" executable of a lowered module (`cortex.runtime.iree_executable` loads it): the NumPy
    executable of its host code, plus the IREE VM module of its segments and what calling them needs."""
    program = IreeProgram(lowered, device, load=False)
    host = numpy_executable(program.host, label)
    members = dict(host.members)
    if program.vmfb is not None:
        members[VMFB] = program.vmfb
    meta = {**host.meta, "device": device, "driver": program.target.driver, SEGMENTS: program.signatures(),
            "whole": program.whole_functions(), CHOICES: [c.as_meta() for c in program.choices], COST_RULE: program.rule}
    return Executable("iree", members, dict(host.symbols), meta)


@dataclass(frozen=True)
class IreeTarget(Target):
    """`cortex-opt -t iree`: the module IREE compiles (a lowered module's segments, legalised), as MLIR;
    `-t 'iree{vmfb=out.vmfb}'` compiles it and writes the VM module there (`device=cuda`: for NVIDIA GPUs),
    printing one line that names the file, its size and the segments."""

    name = "iree"
    device: str = "cpu"
    vmfb: str = ""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        check_device(self.device)
        host = module.clone()
        done = [op for op in host.ops if isinstance(op, func.FuncOp) and SEGMENT in op.attributes]  # outlined before
        min_intensity, min_work = segment_rule()
        segments = done + outline_segments(host, min_intensity=min_intensity, min_work=min_work)
        if not segments:
            raise CortexError("no function of the module has a run of linalg ops worth compiling for IREE "
                              "(see cortex-outline-segments' cost rule)")
        iree_module = segment_module(segments)
        target = target_named(DEVICES[self.device])
        if not self.vmfb:  # the text the compiler is given, so the printed IR is what runs
            output.write(to_text(legalized_for(iree_module, target)))
            return
        data = compile_module(iree_module, target)
        path = Path(self.vmfb)
        tmp = path.with_name(f".{path.name}.partial")
        try:
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError as e:
            raise CortexError(f"cannot write '{path}': {e.strerror or e}") from None
        names = ", ".join(f"@{s.sym_name.data}" for s in segments)
        output.write(f"// wrote {path}: {len(data)} bytes, IREE target {target.name} ({target.driver}); functions {names}\n")


def origins(program: IreeProgram) -> list[str]:
    """The source ops each segment call stands for (for reports)."""
    out = []
    for op in program.host.walk():
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in program.segment_names:
            origin = op.attributes.get("cortex.origin")
            out.append(origin.data if isinstance(origin, StringAttr) else op.callee.root_reference.data)
    return out


__all__ = ["IreeProgram", "IreeTarget", "check_device", "iree_executable", "segment_module"]
