"""The NumPy backend: a lowered module (linalg/arith/math/tensor/scf/func and
`func.call`s to declared externs) in, a readable Python module out.

    source = emit_numpy(lowered)                  # what `cortex-opt -t numpy` prints
    emitted = ModuleEmitter(lowered).emit()       # what the runtime compiles

The generated module has three parts:
- constants: every `arith.constant dense<...>`, hoisted to module level and
  built once when the module loads (`np.frombuffer` over the raw bytes;
  read-only, so no frame can corrupt one);
- externs: one binding per extern declaration, made at load time through the
  runtime's extern table, so an unknown extern fails when the pipeline is
  compiled rather than on some later frame;
- one Python function per `func.func`, one chunk of statements per op (the
  translators live in this folder's arith, linalg, tensor and control
  modules). Every statement's comment names the cortex op it came from
  (the lowering's `cortex.origin`) and the upstream op it implements.

With `profile=True` consecutive statements from the same cortex op are
wrapped in `with _p_<op>:` timing sections; without it there are no hooks at
all, so the plain module pays nothing for profiling.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.target import Target

# The translators register themselves in TRANSLATORS on import.
from cortex.backends.numpy import arith, control, linalg, syntax, tensor  # noqa: F401
from cortex.backends.numpy.blas import reaches_blas
from cortex.backends.numpy.codegen import (
    Chunk,
    EmitError,
    FunctionEmitter,
    Namer,
    Term,
    identifier,
    literal,
    np_dtype,
    prune,
    static_shape,
    value_expr,
)
from cortex.backends.numpy.release import release_dead
from cortex.dialects import abi
from cortex.errors import CortexError
from cortex.runtime import numpy_support
from cortex.runtime.numpy_executable import CONSTANTS, KIND, run_source
from cortex.runtime.program import CALLS_BLAS, Executable

SMALL_CONSTANT = 16  # elements; larger constants are stored as raw bytes


@dataclass
class EmittedModule:
    """Generated Python, with the large constants' bytes kept beside it."""

    head: list[str]
    body: list[str]
    blobs: dict[str, bytes] = field(default_factory=dict)
    functions: dict[str, str] = field(default_factory=dict)  # symbol -> Python name
    calls_blas: bool = True  # its code may reach BLAS (a matrix product or an extern call: `blas.reaches_blas`)

    @property
    def source(self) -> str:
        """The readable module; the loader supplies `_BLOBS` (see `namespace`)."""
        note = []
        if self.blobs:
            size = sum(len(b) for b in self.blobs.values())
            note = [f"# _BLOBS: the raw bytes of {len(self.blobs)} large constants ({size / 1024:.0f} KiB), supplied by the loader", ""]
        return "\n".join(self.head + note + self.body) + "\n"

    def self_contained(self) -> str:
        """The module with the constants' bytes embedded (base64), runnable on its own."""
        if not self.blobs:
            return self.source
        lines = ["_BLOBS = {"]
        for name, blob in self.blobs.items():
            text = base64.b64encode(blob).decode()
            lines.append(f"    {name!r}: _rt.unpack(")
            lines += [f'        "{text[i:i + 96]}"' for i in range(0, len(text), 96)]
            lines.append("    ),")
        lines += ["}", ""]
        return "\n".join(self.head + lines + self.body) + "\n"

    def namespace(self) -> dict:
        return {"__name__": "cortex_generated", "_BLOBS": dict(self.blobs)}


class ModuleEmitter:
    """Emits one lowered module: module-level names, constants, externs, functions."""

    def __init__(self, module: ModuleOp, profile: bool = False):
        self.module, self.profile = module, profile
        for op in module.walk():
            if op.name.startswith("cortex."):
                raise EmitError(
                    f"numpy backend: the module still contains '{op.name}'; lower it first "
                    "(-p convert-cortex-to-linalg,convert-cortex-to-extern)"
                )
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, FuncOp)}
        self.namer = Namer()
        self.function_names = {
            sym: self.namer.fresh(identifier(sym, "fn")) for sym, f in self.functions.items() if not f.is_declaration
        }
        self.constant_lines: list[str] = []
        self._constants: dict[tuple, str] = {}
        self.blobs: dict[str, bytes] = {}
        self.extern_lines: list[str] = []
        self._externs: dict[str, str] = {}
        self._sections: dict[str, str] = {}
        self.pooled = False  # some function writes into `_pool`'s buffers (`FunctionEmitter.buffer`)
        self.calls_blas = False  # some function computes a matrix product or calls an extern (`blas.reaches_blas`)

    # ---- what translators ask of the module

    def lookup(self, symbol: str) -> FuncOp | None:
        return self.functions.get(symbol)

    def function_name(self, f: FuncOp) -> str:
        return self.function_names[f.sym_name.data]

    def constant(self, attr: DenseIntOrFPElementsAttr, hint: str | None, origin: str) -> str:
        """The module-level name of a dense constant (identical constants share one)."""
        dtype = np_dtype(attr.get_element_type())
        shape = tuple(attr.get_shape())
        data = bytes(attr.data.data)
        key = (dtype, shape, data)
        if key in self._constants:
            return self._constants[key]
        name = self.namer.fresh("_k_" + identifier(hint or origin, "c"))  # named after its cortex op if anonymous
        value = numpy_support.const(data, dtype, shape)
        flat = value.reshape(-1)
        if flat.size > 1 and bool(np.all(flat == flat[0])):
            code = f"_rt.full({shape}, {literal(flat[0].item(), dtype)}, {dtype!r})"
        elif flat.size <= SMALL_CONSTANT:
            items = ", ".join(literal(v, dtype) for v in flat.tolist())
            code = f"_rt.array([{items}], {dtype!r}, {shape})"
        else:
            self.blobs[name] = data
            code = f"_rt.const(_BLOBS[{name!r}], {dtype!r}, {shape})"
        self.constant_lines.append(f"{name} = {code}  # {origin}")
        self._constants[key] = name
        return name

    def splat(self, shape: tuple[int, ...], value, dtype: str, hint: str, origin: str) -> str:
        """A module-level read-only array of one value (ones vectors for reductions, ...)."""
        key = ("splat", dtype, shape, value)
        if key not in self._constants:
            name = self.namer.fresh(f"_k_{hint}{'x'.join(map(str, shape))}")
            self.constant_lines.append(f"{name} = _rt.full({shape}, {literal(value, dtype)}, {dtype!r})  # {origin}")
            self._constants[key] = name
        return self._constants[key]

    def extern(self, decl: FuncOp) -> str:
        """The module-level name bound to an extern declaration's kernel."""
        symbol = decl.sym_name.data
        if symbol in self._externs:
            return self._externs[symbol]
        try:
            kernel, values = abi.extern_of(decl)
        except CortexError as e:
            raise EmitError(f"numpy backend: {e}") from None
        name = self.namer.fresh("_x_" + identifier(symbol, "extern"))
        binding = syntax.assign(name, syntax.call("_extern", syntax.string(kernel), value_expr(values)))
        self.extern_lines.append(f"{syntax.code(binding)}  # @{symbol}")
        self._externs[symbol] = name
        return name

    def section(self, label: str) -> str:
        if label not in self._sections:
            self._sections[label] = self.namer.fresh("_p_" + identifier(label, "op"))
        return self._sections[label]

    # ---- the module

    def emit(self) -> EmittedModule:
        body: list[str] = []
        for f in self.functions.values():
            if not f.is_declaration:
                body += ["", ""] + self.emit_function(f)
        head = [
            '"""NumPy code generated by Cortex (cortex.backends.numpy.emitter) from a lowered module.',
            "",
            "Each statement's comment names the cortex op it came from and the upstream op it implements.",
            '"""',
            "",
            "import numpy as np",
            "",
            "from cortex.runtime import numpy_support as _rt",
        ]
        if self.extern_lines:
            head.append("from cortex.runtime.externs import bind_extern as _extern")
        if self.pooled:
            head += ["", "_pool = _rt.BufferPool()  # large intermediates: buffers kept from call to call, one set per thread"]
        if self.profile:
            head += ["from cortex.runtime.profiling import Profiler", "", "_prof = Profiler()"]
            head += [f"{name} = _prof.section({label!r})" for label, name in self._sections.items()]
        head.append("")
        tail = []
        if self.constant_lines:
            tail += ["# constants: built once, when the module loads", *self.constant_lines, ""]
        if self.extern_lines:
            tail += ["# externs: kernels from the runtime's extern table, bound when the module loads", *self.extern_lines, ""]
        return EmittedModule(head, tail + body[1:], dict(self.blobs), dict(self.function_names), self.calls_blas)

    def emit_function(self, f: FuncOp) -> list[str]:
        symbol = f.sym_name.data
        taken = set(self.function_names.values())
        fe = FunctionEmitter(self, symbol, taken)
        params = []
        for arg in f.body.block.args:
            name = fe.name(arg, f"arg{arg.index}")
            params.append(name)
            fe.bind(arg, Term(syntax.name(name), np_dtype(arg.type), static_shape(arg.type)))
        fe.translate_ops(f.body.block.ops)
        prune(fe.chunks)
        release_dead(fe.chunks, params, fe.large)
        self.calls_blas = self.calls_blas or reaches_blas(
            (s for top in fe.chunks for chunk in top.walk() for s in (*chunk.statements, *chunk.tail)), self._externs.values())
        inputs = ", ".join(str(t) for t in f.function_type.inputs.data)
        outputs = ", ".join(str(t) for t in f.function_type.outputs.data)
        lines = [
            f"def {self.function_names[symbol]}({', '.join(params)}):",
            f'    """@{symbol}({inputs}) -> ({outputs})"""',
        ]
        return lines + self.render(fe.chunks, 1)

    def render(self, chunks: list[Chunk], depth: int) -> list[str]:
        ind = "    " * depth
        out: list[str] = []
        i = 0
        while i < len(chunks):
            chunk = chunks[i]
            if chunk.blocks:
                out += [f"{ind}{line}  # {chunk.origin}: {chunk.note}" for line in chunk.lines]
                for header, inner in chunk.blocks:
                    out.append(f"{ind}{header}  # {chunk.origin}: {chunk.note}")
                    out += self.render(inner, depth + 1) or [f"{ind}    pass"]
                out += [f"{ind}{line}  # {chunk.origin}: {chunk.note}" for line in chunk.tail_lines]
                i += 1
                continue
            j = i
            while j < len(chunks) and not chunks[j].blocks and chunks[j].origin == chunk.origin:
                j += 1
            lines = [f"{line}  # {c.origin}: {c.note}" for c in chunks[i:j] for line in c.lines]
            if self.profile and lines:
                out.append(f"{ind}with {self.section(chunk.origin)}:")
                out += [f"{ind}    {line}" for line in lines]
            else:
                out += [f"{ind}{line}" for line in lines]
            i = j
        return out


def emit(module: ModuleOp, profile: bool = False) -> EmittedModule:
    return ModuleEmitter(module, profile).emit()


def load(emitted: EmittedModule, filename: str) -> dict:
    """Run an emitted module (as the runtime's "numpy" loader does); returns its namespace."""
    return run_source(emitted.source, emitted.blobs, filename)


def numpy_executable(module: ModuleOp, label: str, device: str = "cpu") -> Executable:
    """The "numpy" executable of a lowered module (`cortex.runtime.numpy_executable` loads it).

    Both the plain and the profiled module are generated now (emitting is
    cheap next to lowering), so turning profiling on later only loads code.
    """
    plain, profiled = emit(module), emit(module, profile=True)
    members: dict[str, str | bytes] = {"source": plain.source, "profiled_source": profiled.source}
    for name, blob in (*plain.blobs.items(), *profiled.blobs.items()):
        key = CONSTANTS + name
        if members.setdefault(key, blob) != blob:
            raise EmitError(f"numpy backend: constant {name} differs between the plain and the profiled module")
    return Executable(KIND, members, dict(plain.functions), {"label": label, CALLS_BLAS: plain.calls_blas})


def emit_numpy(module: ModuleOp, profile: bool = False) -> str:
    """The generated Python module, self-contained (constants embedded)."""
    return emit(module, profile).self_contained()


@dataclass(frozen=True)
class NumpyTarget(Target):
    """`cortex-opt -t numpy` (or `-t 'numpy{profile=true}'`): print the generated Python."""

    name = "numpy"
    profile: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_numpy(module, self.profile))


__all__ = ["EmitError", "EmittedModule", "ModuleEmitter", "NumpyTarget", "emit", "emit_numpy", "load", "numpy_executable"]
