"""A compiled program: what `cortex.compile` produces and the runtime runs, and its file format.

A `Program` is plain data — strings, bytes, numbers — with no IR and no
callbacks, so it can be saved, loaded, and sent to a Ray actor where the
compiler is not even importable:

- the entry's signature (`args`, `results`: `Port`s with their `ValueSpec`)
  and the values of its weight ports (`weights`);
- the state layout (`states`: each state's class from the frame split's
  analysis: delayed input, leading recurrence, recurrence or read-only);
- `executables`: each a loadable unit of one kind ("numpy": generated Python
  source, constants as bytes; another backend: a compiled module's bytes),
  named; today "entry" (the whole entry function) and "split" (the frame
  split's four parts and the stage split's stages);
- `entry_part`, and `split` (`FrameSplit`: the four parts and the stages),
  each `Part` naming its executable, its function there, and the wiring key
  of each argument and result (`cortex.semantics.abi_facts.WireKey`).

The file (`Program.save`, `Program.load`; `compiled.save(path)`,
`cortex.load(path)`) is a zip archive:

    program.json                  {"format": "cortex-program", "version": 3, ...every field above,
                                   "modes": a multi-mode program's order, switch states and later variants,
                                   each executable's members listed as
                                   {"file": ..., "encoding": "text"|"bytes", "sha256": ...},
                                   "sha256": the digest of this document's canonical JSON,
                                   "hmac_sha256": its keyed signature (only when saved with a key)}
    executables/<name>/<member>   each member's payload: UTF-8 text or raw bytes
    variants/<k>/executables/...  a multi-mode program's later variants' members

This module says what program.json's fields mean; `cortex.runtime.program_file` moves the bytes and guards
them (the file, the archive, the format, version, digest and signature, checked before any field is read).
A program file is code, as a pickle or a `.vmfb` is: a "numpy" executable is
Python source that loading runs. Load only files you trust, or sign them:
saved with a key (`key=` or `CORTEX_PROGRAM_KEY`), a file loads with that key
only if its HMAC-SHA256 matches. Every member's digest is checked before it is
decoded, and a missing one is refused. A member missing, damaged or
malformed, a field of the wrong type or out of range, members (counted once
per reference) that inflate beyond `MAX_PROGRAM_BYTES`: each is a one-line
CortexError.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
import re
import zipfile
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cortex.errors import CortexError
from cortex.runtime import program_file
from cortex.runtime.program_file import (
    FORMAT,
    KEY_VARIABLE,
    MAX_PROGRAM_BYTES,
    SHA256,
    VERSION,
    archive_bytes,
    document_digest,
    key_of,
    one_line,
    open_document,
    program_path,
    read_file,
    read_member,
    write_file,
)
from cortex.semantics.abi_facts import Port, ValueSpec, WireKey

STATE_KINDS = ("delayed", "leading", "recurrence", "read-only", "unclassified")
"""The state analysis's classes, and `unclassified`: a program compiled without the frame split (`split=False`)."""
"""The classes of a state (`cortex.passes.state_analysis`), as the engines read them."""

MAX_DIMENSION = 2**31 - 1
"""The largest size a port's dimension may have (as ONNX import bounds a dimension)."""

MAX_ELEMENTS = 1 << 30
"""The most elements a port's value may have (8 GiB of float64): a state's zeros are made when the program
loads, so a shape beyond this is refused there, not left to the allocator."""

DYNAMIC = (-1, -(2**63))
"""How a dynamic size is written (MLIR's kDynamic, and -1)."""

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")
"""The element dtypes a port may name."""

_MEMBER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")


CALLS_BLAS = "calls_blas"
"""An executable's meta key: whether its code may reach BLAS (a matrix product, an extern call), as its
producer recorded when it made the code (absent: it may). A program's `BackendTraits.calls_blas` is read from it."""


THREADS: ContextVar[int | None] = ContextVar("cortex_executable_threads", default=None)
"""The threads one call of the executable being loaded may run on, for the kinds that have a say (IREE's CPU
drivers); None: its kind's default. Set by `cortex.runtime.executables.load_executable(..., threads=)` for
the load only, so a loader keeps its (executable, profile) signature."""


@dataclass(frozen=True)
class Executable:
    """One loadable unit of a program: one namespace, one runtime context.

    `kind` picks the loader (`cortex.runtime.executables.KINDS`); `members`
    is its payload, text (NumPy source) or bytes (constants, a compiled
    module); `symbols` maps each function symbol of the lowered module to its
    name in the payload; `meta` holds the kind's own JSON-able facts.
    """

    kind: str
    members: dict[str, str | bytes]
    symbols: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self, member: str) -> str:
        value = self.members.get(member)
        if not isinstance(value, str):
            raise CortexError(f"the {self.kind} executable has no text member '{member}'")
        return value


@dataclass(frozen=True)
class Part:
    """One callable piece of a program: the whole entry, a frame-split part, or one stage.

    It is the function `symbol` of executable `executable`; argument k
    receives the value of wiring key `args[k]`, result k is the value of
    `results[k]`; `meta` holds per-part facts a backend wants to keep.
    """

    name: str
    executable: str
    symbol: str
    args: tuple[str, ...]
    results: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FrameSplit:
    """The entry cut for frames in flight (`cortex.passes.frame_split`): delayed, parallel, recurrence and tail
    parts, and the parallel and delayed parts cut once more per stage (`cortex.passes.stage_split`), in
    program order. A program saved before the delayed part had stages has none: it runs that part whole."""

    parts: dict[str, Part]
    stages: tuple[Part, ...]
    delayed_stages: tuple[Part, ...] = ()


@dataclass(frozen=True)
class StateInfo:
    """One state of the entry and its class ("delayed", "leading", "recurrence", "read-only"), with the reason."""

    name: str
    kind: str
    reason: str


@dataclass(frozen=True)
class BackendTraits:
    """What the runtime must know of the backend that compiled a program, asked instead of its name.

    The compiler's `Backend` (`cortex.backends.backend`) fills it in; the runtime reads it without the
    compiler (`Backend.traits`, when it builds the program). Saved as program.json's meta keys `backend`,
    `device`, `calls_blas`, `split_in_stages` and `calls_split`. `calls_blas`: whether the entry's code may reach
    BLAS, as its producer recorded (`CALLS_BLAS`); a file saved before the key existed is read as True.
    """

    name: str = "numpy"
    device: str = "cpu"
    calls_blas: bool = True  # the entry's code may reach BLAS: a plain call then holds the BLAS limit
    split_in_stages: bool = False  # the split's parallel and delayed parts run as their stages (one code per cut)
    calls_split: bool = False  # a call runs the frame split's parts in order (each cut compiled alone)

    META_KEYS: ClassVar[tuple[str, ...]] = ("backend", "device", "calls_blas", "split_in_stages", "calls_split")
    """program.json's meta keys that hold these traits (read into `Program.backend`, not left in `Program.meta`)."""

    def as_meta(self) -> dict[str, Any]:
        return {"backend": self.name, "device": self.device, "calls_blas": self.calls_blas,
                "split_in_stages": self.split_in_stages, "calls_split": self.calls_split}

    @classmethod
    def of_meta(cls, meta: dict[str, Any]) -> BackendTraits:
        """The traits a saved program's meta records (`as_meta`; older files: what their keys imply)."""
        name = meta.get("backend", "numpy")
        if not isinstance(name, str):
            raise CortexError(f"meta backend is {type(name).__name__}, not text")
        device = meta.get("device", "cpu")
        flags = {k: meta.get(k, False) for k in ("split_in_stages", "calls_split")}
        flags["calls_blas"] = meta.get("calls_blas", True)  # a file saved before the key: held, which is always safe
        for key, value in flags.items():
            if type(value) is not bool:
                raise CortexError(f"meta {key} is {str(value)[:40]!r}, not true or false")
        return cls(name, str(device), **flags)


@dataclass(frozen=True)
class Program:
    """A compiled pipeline as data (see the module docstring)."""

    entry: str
    args: tuple[Port, ...]
    results: tuple[Port, ...]
    weights: dict[str, float]
    states: tuple[StateInfo, ...]
    executables: dict[str, Executable]
    entry_part: Part
    split: FrameSplit | None = None
    split_error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    derived: tuple[Part, ...] = ()
    """States derived from another (temporal reuse): each part computes `update:<state>` from `state:<source>`,
    which the runtime runs when the caller's source is not the one the state was derived from."""
    backend: BackendTraits = field(default_factory=BackendTraits)
    """What the runtime asks of the backend that compiled the program (saved in `meta`'s keys)."""
    variants: dict[str, Program] = field(default_factory=dict)
    """A multi-mode program (`CompileOptions(modes=...)`): mode → its variant, in order, the first being this
    program's own fields (with no variants); {} for a single-mode program."""
    switch_states: dict[str, str] = field(default_factory=dict)
    """A multi-mode program's states some mode reads and another's DCE stops updating → "keep" (updated in
    every variant) or "recompute" (a delayed input, recomputed from the previous frame on a switch)."""

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes a call may pick (a multi-mode program's), in order; () for a single-mode program."""
        return tuple(self.variants)

    @property
    def inputs(self) -> list[Port]:
        return [p for p in self.args if p.kind == "input"]

    @property
    def runtime_inputs(self) -> list[str]:
        """The weights the program takes at run time (bound from `weights` when it loads)."""
        return [p.name for p in self.args if p.kind == "weight"]

    def states_of(self, *kinds: str) -> list[str]:
        return [s.name for s in self.states if s.kind in kinds]

    def frame_split(self) -> FrameSplit:
        """The frame split, or a CortexError saying why there is none."""
        if self.split is None:
            raise CortexError(self.split_error or "this program was compiled without its frame split")
        return self.split

    # ---- the file

    def save(self, path: str | Path, key: str | bytes | None = None) -> Path:
        """Write the file atomically: a temporary sibling, flushed to disk, renamed over `path` (a full disk or
        a crash leaves the old file whole). Signed when a key is given (`key=`, else `CORTEX_PROGRAM_KEY`)."""
        path = program_path(path, "save")
        return write_file(path, self.to_bytes(key))

    def to_bytes(self, key: str | bytes | None = None) -> bytes:
        files: dict[str, bytes] = {}
        doc = _encode_program(self, files)
        return archive_bytes(doc, files, key_of(key))

    @classmethod
    def load(cls, path: str | Path, key: str | bytes | None = None) -> Program:
        """Read a saved program (a file is code: see the module docstring); with a key (`key=`, else
        `CORTEX_PROGRAM_KEY`) only a file signed with it loads."""
        path = program_path(path, "load")
        return cls.from_bytes(read_file(path), str(path), key)

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "program", key: str | bytes | None = None) -> Program:
        signing = key_of(key)
        try:
            return _decode_file(data, signing)
        except CortexError as e:
            raise CortexError(f"{where}: {e}") from None
        except Exception as e:  # noqa: BLE001 - only data is read here (no member runs): any failure is a bad file
            raise CortexError(f"{where}: malformed program ({type(e).__name__}: {one_line(e, 200)})") from None


def _decode_file(data: bytes, key: bytes | None) -> Program:
    """The program of a checked archive (`program_file.open_document`: format, version and digest first)."""
    doc, archive = open_document(data, key)
    with archive:
        try:
            return _decode_program(doc, archive)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as e:
            raise CortexError(f"malformed program.json ({type(e).__name__}: {one_line(e, 200)})") from None



# ---------------------------------------------------------------- JSON encoding


def _spec_json(spec: ValueSpec) -> dict[str, Any]:
    return {"type": spec.type, "dtype": spec.dtype, "shape": None if spec.shape is None else list(spec.shape),
            "unsigned": spec.unsigned}


def _spec_of(doc: dict[str, Any]) -> ValueSpec:
    shape, dtype = doc["shape"], doc["dtype"]
    if dtype is not None and dtype not in DTYPES:
        raise CortexError(f"port type {str(doc['type'])[:60]!r} has dtype {str(dtype)[:40]!r}, not one of {', '.join(DTYPES)}")
    if shape is not None and not (
        isinstance(shape, list) and all(type(d) is int and (0 <= d <= MAX_DIMENSION or d in DYNAMIC) for d in shape)
    ):
        raise CortexError(f"port type {str(doc['type'])[:60]!r} has shape {str(shape)[:60]}: sizes are 0 to {MAX_DIMENSION}, or dynamic")
    if shape is not None and math.prod(d for d in shape if d >= 0) > MAX_ELEMENTS:
        raise CortexError(f"port type {str(doc['type'])[:60]!r} has shape {str(shape)[:60]}: more than {MAX_ELEMENTS} elements")
    return ValueSpec(str(doc["type"]), dtype, None if shape is None else tuple(shape), bool(doc["unsigned"]))


def _port_json(port: Port) -> dict[str, Any]:
    return {"index": port.index, "kind": port.kind, "name": port.name, "spec": _spec_json(port.spec)}


def _port_of(doc: dict[str, Any]) -> Port:
    if doc["kind"] not in ("input", "state", "weight", "output"):
        raise CortexError(f"unknown port kind {doc['kind']!r}")
    return Port(int(doc["index"]), str(doc["kind"]), str(doc["name"]), _spec_of(doc["spec"]))


def _ports_of(docs: list[Any], what: str) -> tuple[Port, ...]:
    ports = tuple(_port_of(p) for p in docs)
    if sorted(p.index for p in ports) != list(range(len(ports))):
        raise CortexError(f"the {what} ports are not numbered 0 to {len(ports) - 1} once each")
    return ports


def _weights_of(doc: dict[str, Any]) -> dict[str, float]:
    weights = {}
    for name, value in doc.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise CortexError(f"weight '{str(name)[:60]}' is {str(value)[:40]!r}, not a finite number")
        weights[str(name)] = float(value)
    return weights


def _state_of(doc: dict[str, Any]) -> StateInfo:
    if doc["kind"] not in STATE_KINDS:
        raise CortexError(f"state '{str(doc['name'])[:60]}' has class {str(doc['kind'])[:40]!r}, not one of {', '.join(STATE_KINDS)}")
    return StateInfo(str(doc["name"]), str(doc["kind"]), str(doc["reason"]))


def _part_json(part: Part) -> dict[str, Any]:
    return {"name": part.name, "executable": part.executable, "symbol": part.symbol, "args": list(part.args),
            "results": list(part.results), "meta": part.meta}


def _part_of(doc: dict[str, Any], executables: dict[str, Executable]) -> Part:
    part = Part(str(doc["name"]), str(doc["executable"]), str(doc["symbol"]), tuple(doc["args"]), tuple(doc["results"]),
                dict(doc.get("meta", {})))
    for key in (*part.args, *part.results):
        WireKey.parse(key)
    exe = executables.get(part.executable)
    if exe is None or part.symbol not in exe.symbols:
        raise CortexError(f"part '{part.name}' names @{part.symbol} of executable '{part.executable}', which has no such function")
    return part


def _encode_program(program: Program, files: dict[str, bytes], prefix: str = "") -> dict[str, Any]:
    executables = {}
    for name, exe in program.executables.items():
        members = {}
        for member, value in exe.members.items():
            if not _MEMBER_NAME.match(name) or not _MEMBER_NAME.match(member) or "/" in name:
                raise CortexError(f"cannot save executable member '{name}/{member}': names are letters, digits, '_.-'")
            file = f"{prefix}executables/{name}/{member}"
            files[file] = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            members[member] = {"file": file, "encoding": "text" if isinstance(value, str) else "bytes",
                               "sha256": hashlib.sha256(files[file]).hexdigest()}
        executables[name] = {"kind": exe.kind, "members": members, "symbols": exe.symbols, "meta": exe.meta}
    split = None
    if program.split is not None:
        split = {"parts": {k: _part_json(p) for k, p in program.split.parts.items()},
                 "stages": [_part_json(p) for p in program.split.stages],
                 "delayed_stages": [_part_json(p) for p in program.split.delayed_stages]}
    modes = None
    if program.variants:
        rest = list(program.variants.items())[1:]
        modes = {"order": list(program.variants), "switch_states": program.switch_states,
                 "variants": {m: _encode_program(v, files, f"variants/{k}/") for k, (m, v) in enumerate(rest)}}
    return {
        "format": FORMAT,
        "version": VERSION,
        "modes": modes,
        "entry": program.entry,
        "args": [_port_json(p) for p in program.args],
        "results": [_port_json(p) for p in program.results],
        "weights": program.weights,
        "states": [{"name": s.name, "kind": s.kind, "reason": s.reason} for s in program.states],
        "executables": executables,
        "entry_part": _part_json(program.entry_part),
        "split": split,
        "split_error": program.split_error,
        "meta": {**program.meta, **program.backend.as_meta()},
        "derived": [_part_json(p) for p in program.derived],
    }


def _decode_program(doc: dict[str, Any], archive: zipfile.ZipFile) -> Program:
    refs = [(str(name), str(member), ref) for name, exe in doc["executables"].items() for member, ref in exe["members"].items()]
    inflated = archive.getinfo("program.json").file_size
    for name, member, ref in refs:
        try:
            inflated += archive.getinfo(ref["file"]).file_size  # once per reference: two members may name one entry
        except KeyError:
            raise CortexError(f"executable '{name[:60]}': member '{member[:60]}' is missing ({str(ref['file'])[:80]})") from None
    if inflated > program_file.MAX_PROGRAM_BYTES:
        raise CortexError(f"the program is too large ({inflated} bytes inflated, members counted once per reference; "
                          f"at most {program_file.MAX_PROGRAM_BYTES})")
    executables = {}
    for name, exe in doc["executables"].items():
        members: dict[str, str | bytes] = {}
        for member, ref in exe["members"].items():
            digest = ref.get("sha256")
            if not isinstance(digest, str) or not SHA256.match(digest):
                raise CortexError(f"executable '{str(name)[:60]}': member '{str(member)[:60]}' carries no SHA-256: refused "
                                  "(a digest is mandatory)")
            raw = read_member(archive, ref["file"])
            if not hmac.compare_digest(hashlib.sha256(raw).hexdigest(), digest):
                raise CortexError(
                    f"executable '{name}': member '{member}' does not match its SHA-256 (changed or damaged after it was saved)"
                )
            if ref["encoding"] == "text":
                members[str(member)] = raw.decode("utf-8")
            elif ref["encoding"] == "bytes":
                members[str(member)] = raw
            else:
                raise CortexError(f"executable '{name}': member '{member}' has unknown encoding {str(ref['encoding'])[:40]!r}")
        executables[str(name)] = Executable(str(exe["kind"]), members, {str(k): str(v) for k, v in exe["symbols"].items()},
                                            dict(exe.get("meta", {})))
    saved_meta = dict(doc.get("meta", {}))
    meta = {k: v for k, v in saved_meta.items() if k not in BackendTraits.META_KEYS}
    split = None
    if doc["split"] is not None:
        split = FrameSplit({str(k): _part_of(p, executables) for k, p in doc["split"]["parts"].items()},
                           tuple(_part_of(p, executables) for p in doc["split"]["stages"]),
                           tuple(_part_of(p, executables) for p in doc["split"].get("delayed_stages", [])))
    program = Program(
        entry=str(doc["entry"]),
        args=_ports_of(doc["args"], "argument"),
        results=_ports_of(doc["results"], "result"),
        weights=_weights_of(doc["weights"]),
        states=tuple(_state_of(s) for s in doc["states"]),
        executables=executables,
        entry_part=_part_of(doc["entry_part"], executables),
        split=split,
        split_error=_split_error_of(doc.get("split_error")),
        meta=meta,
        derived=tuple(_derived_of(p, executables) for p in doc.get("derived", [])),
        backend=BackendTraits.of_meta(saved_meta),
    )
    return _with_modes(program, doc.get("modes"), archive)


def _with_modes(program: Program, modes: Any, archive: zipfile.ZipFile) -> Program:
    """`program` with the variants program.json's "modes" names (None: a single-mode program)."""
    if modes is None:
        return program
    order, docs = [str(m) for m in modes["order"]], modes["variants"]
    if not order or len(set(order)) != len(order) or sorted(docs) != sorted(order[1:]):
        raise CortexError(f"modes {str(order)[:80]} do not match the variants saved ({str(sorted(docs))[:80]})")
    switch = {str(k): str(v) for k, v in modes["switch_states"].items()}
    if set(switch.values()) - {"keep", "recompute"}:
        raise CortexError(f"switch_states holds {str(sorted(set(switch.values())))[:60]}, not 'keep' or 'recompute'")
    variants = {order[0]: program, **{m: _decode_program(docs[m], archive) for m in order[1:]}}
    return with_variants(variants, switch)


def with_variants(variants: dict[str, Program], switch_states: dict[str, str]) -> Program:
    """One program for every mode of `variants` (mode → single-mode program, in order): the first's fields,
    every variant, and what each state shared by them does on a switch."""
    plain = {m: dataclasses.replace(p, variants={}, switch_states={}) for m, p in variants.items()}
    entries = {p.entry for p in plain.values()}
    if len(entries) != 1:
        raise CortexError(f"the variants of one program run one entry, got {', '.join(sorted(entries))}")
    first = next(iter(plain.values()))
    return dataclasses.replace(first, variants=plain, switch_states=dict(switch_states))


def _derived_of(doc: dict[str, Any], executables: dict[str, Executable]) -> Part:
    """A derived state's part: one source state in (and weights), its state out."""
    part = _part_of(doc, executables)
    kinds = [WireKey.parse(k).kind for k in part.args]
    if not kinds or kinds[0] != "state" or set(kinds[1:]) - {"weight"} or [WireKey.parse(k).kind for k in part.results] != ["update"]:
        raise CortexError(f"derived part '{part.name[:60]}' must read one state and write one state")
    return part


def _split_error_of(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise CortexError(f"split_error is {type(value).__name__}, not text")
    return value


__all__ = ["CALLS_BLAS", "FORMAT", "KEY_VARIABLE", "MAX_PROGRAM_BYTES", "VERSION", "BackendTraits", "document_digest", "Executable", "FrameSplit", "Part", "Program", "StateInfo", "THREADS", "with_variants"]
