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
  of each argument and result (`cortex.dialects.abi.WireKey`).

The file (`Program.save`, `Program.load`; `compiled.save(path)`,
`cortex.load(path)`) is a zip archive:

    program.json                  {"format": "cortex-program", "version": 1, ...every field above,
                                   each executable's members listed as
                                   {"file": ..., "encoding": "text"|"bytes", "sha256": ...}}
    executables/<name>/<member>   each member's payload: UTF-8 text or raw bytes

Nothing is pickled, but a "numpy" executable is Python source that loading
runs: a program file is code, so load only files you trust. Each member's
SHA-256 is written beside it in program.json and checked before anything
runs (a damaged or edited member is refused, not run). A file of another
format or version, a member missing, damaged or malformed, a field of the
wrong type or out of range, an archive that inflates beyond
`MAX_PROGRAM_BYTES`, is a one-line CortexError.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex.dialects.abi import Port, ValueSpec, WireKey
from cortex.errors import CortexError

FORMAT = "cortex-program"
VERSION = 1
"""Bumped whenever a field changes meaning; a runtime reads its own version only."""

STATE_KINDS = ("delayed", "leading", "recurrence", "read-only")
"""The classes of a state (`cortex.passes.state_analysis`), as the engines read them."""

MAX_PROGRAM_BYTES = 1 << 32
"""The most a program archive may inflate to (all members together): a zip that claims more is refused
before it is read, instead of filling memory (the L2 pipeline's program is ~100 kB, a CNN's some MB)."""

MAX_DIMENSION = 2**31 - 1
"""The largest size a port's dimension may have (as ONNX import bounds a dimension)."""

DYNAMIC = (-1, -(2**63))
"""How a dynamic size is written (MLIR's kDynamic, and -1)."""

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")
"""The element dtypes a port may name."""

_MEMBER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")


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

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_bytes(self.to_bytes())
        return path

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        files: dict[str, bytes] = {}
        doc = _encode_program(self, files)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("program.json", json.dumps(doc, indent=1, sort_keys=True))
            for name, data in files.items():
                archive.writestr(name, data)
        return buffer.getvalue()

    @classmethod
    def load(cls, path: str | Path) -> Program:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CortexError(f"cannot read program '{path}': {e.strerror or e}") from None
        return cls.from_bytes(data, str(path))

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "program") -> Program:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile:
            raise CortexError(f"{where}: not a cortex program (not a zip archive)") from None
        with archive:
            inflated = sum(info.file_size for info in archive.infolist())
            if inflated > MAX_PROGRAM_BYTES:
                raise CortexError(f"{where}: the archive is too large ({inflated} bytes inflated, at most {MAX_PROGRAM_BYTES})")
            try:
                doc = json.loads(_read(archive, "program.json"))
            except KeyError:
                raise CortexError(f"{where}: not a cortex program (no program.json)") from None
            except CortexError as e:
                raise CortexError(f"{where}: {e}") from None
            except RecursionError:
                raise CortexError(f"{where}: program.json is not a cortex program's (nested too deeply)") from None
            except ValueError as e:
                raise CortexError(f"{where}: program.json is not JSON: {e}") from None
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                got = doc.get("format") if isinstance(doc, dict) else None
                raise CortexError(f"{where}: not a cortex program (format {got!r}, expected '{FORMAT}')")
            if type(doc.get("version")) is not int or doc.get("version") != VERSION:
                raise CortexError(
                    f"{where}: cortex program format version {doc.get('version')!r}; this runtime reads version {VERSION} "
                    "(compile the pipeline again with this version)"
                )
            try:
                return _decode_program(doc, archive)
            except CortexError as e:
                raise CortexError(f"{where}: {e}") from None
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as e:
                raise CortexError(f"{where}: malformed program.json ({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None


def _read(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes; a damaged one (bad CRC, bad deflate data) is a CortexError. KeyError: no such member."""
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as e:
        raise CortexError(f"member '{name}' is damaged ({' '.join(str(e).split())[:120]})") from None


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


def _encode_program(program: Program, files: dict[str, bytes]) -> dict[str, Any]:
    executables = {}
    for name, exe in program.executables.items():
        members = {}
        for member, value in exe.members.items():
            if not _MEMBER_NAME.match(name) or not _MEMBER_NAME.match(member) or "/" in name:
                raise CortexError(f"cannot save executable member '{name}/{member}': names are letters, digits, '_.-'")
            file = f"executables/{name}/{member}"
            files[file] = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            members[member] = {"file": file, "encoding": "text" if isinstance(value, str) else "bytes",
                               "sha256": hashlib.sha256(files[file]).hexdigest()}
        executables[name] = {"kind": exe.kind, "members": members, "symbols": exe.symbols, "meta": exe.meta}
    split = None
    if program.split is not None:
        split = {"parts": {k: _part_json(p) for k, p in program.split.parts.items()},
                 "stages": [_part_json(p) for p in program.split.stages],
                 "delayed_stages": [_part_json(p) for p in program.split.delayed_stages]}
    return {
        "format": FORMAT,
        "version": VERSION,
        "entry": program.entry,
        "args": [_port_json(p) for p in program.args],
        "results": [_port_json(p) for p in program.results],
        "weights": program.weights,
        "states": [{"name": s.name, "kind": s.kind, "reason": s.reason} for s in program.states],
        "executables": executables,
        "entry_part": _part_json(program.entry_part),
        "split": split,
        "split_error": program.split_error,
        "meta": program.meta,
        "derived": [_part_json(p) for p in program.derived],
    }


def _decode_program(doc: dict[str, Any], archive: zipfile.ZipFile) -> Program:
    executables = {}
    for name, exe in doc["executables"].items():
        members: dict[str, str | bytes] = {}
        for member, ref in exe["members"].items():
            try:
                raw = _read(archive, ref["file"])
            except KeyError:
                raise CortexError(f"executable '{name}': member '{member}' is missing ({ref['file']})") from None
            digest = ref.get("sha256")
            if digest is not None and hashlib.sha256(raw).hexdigest() != digest:
                raise CortexError(
                    f"executable '{name}': member '{member}' does not match its SHA-256 (changed or damaged after it was saved)"
                )
            if ref["encoding"] == "text":
                members[member] = raw.decode("utf-8")
            elif ref["encoding"] == "bytes":
                members[member] = raw
            else:
                raise CortexError(f"executable '{name}': member '{member}' has unknown encoding {ref['encoding']!r}")
        executables[str(name)] = Executable(str(exe["kind"]), members, {str(k): str(v) for k, v in exe["symbols"].items()},
                                            dict(exe.get("meta", {})))
    split = None
    if doc["split"] is not None:
        split = FrameSplit({str(k): _part_of(p, executables) for k, p in doc["split"]["parts"].items()},
                           tuple(_part_of(p, executables) for p in doc["split"]["stages"]),
                           tuple(_part_of(p, executables) for p in doc["split"].get("delayed_stages", [])))
    return Program(
        entry=str(doc["entry"]),
        args=_ports_of(doc["args"], "argument"),
        results=_ports_of(doc["results"], "result"),
        weights=_weights_of(doc["weights"]),
        states=tuple(_state_of(s) for s in doc["states"]),
        executables=executables,
        entry_part=_part_of(doc["entry_part"], executables),
        split=split,
        split_error=_split_error_of(doc.get("split_error")),
        meta=dict(doc.get("meta", {})),
        derived=tuple(_derived_of(p, executables) for p in doc.get("derived", [])),
    )


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


__all__ = ["FORMAT", "MAX_PROGRAM_BYTES", "VERSION", "Executable", "FrameSplit", "Part", "Program", "StateInfo"]
