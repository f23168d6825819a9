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
                                   each executable's members listed as {"file": ..., "encoding": "text"|"bytes"}}
    executables/<name>/<member>   each member's payload: UTF-8 text or raw bytes

Nothing is pickled. A file of another format or version, a member missing
or malformed, is a one-line CortexError.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex.dialects.abi import Port, ValueSpec, WireKey
from cortex.errors import CortexError

FORMAT = "cortex-program"
VERSION = 1
"""Bumped whenever a field changes meaning; a runtime reads its own version only."""

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
    parts, and the parallel part cut once more per stage (`cortex.passes.stage_split`), in program order."""

    parts: dict[str, Part]
    stages: tuple[Part, ...]


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
            try:
                doc = json.loads(archive.read("program.json"))
            except KeyError:
                raise CortexError(f"{where}: not a cortex program (no program.json)") from None
            except ValueError as e:
                raise CortexError(f"{where}: program.json is not JSON: {e}") from None
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                got = doc.get("format") if isinstance(doc, dict) else None
                raise CortexError(f"{where}: not a cortex program (format {got!r}, expected '{FORMAT}')")
            if doc.get("version") != VERSION:
                raise CortexError(
                    f"{where}: cortex program format version {doc.get('version')!r}; this runtime reads version {VERSION} "
                    "(compile the pipeline again with this version)"
                )
            try:
                return _decode_program(doc, archive)
            except CortexError as e:
                raise CortexError(f"{where}: {e}") from None
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise CortexError(f"{where}: malformed program.json ({type(e).__name__}: {e})") from None


# ---------------------------------------------------------------- JSON encoding


def _spec_json(spec: ValueSpec) -> dict[str, Any]:
    return {"type": spec.type, "dtype": spec.dtype, "shape": None if spec.shape is None else list(spec.shape),
            "unsigned": spec.unsigned}


def _spec_of(doc: dict[str, Any]) -> ValueSpec:
    shape = doc["shape"]
    return ValueSpec(str(doc["type"]), doc["dtype"], None if shape is None else tuple(int(d) for d in shape),
                     bool(doc["unsigned"]))


def _port_json(port: Port) -> dict[str, Any]:
    return {"index": port.index, "kind": port.kind, "name": port.name, "spec": _spec_json(port.spec)}


def _port_of(doc: dict[str, Any]) -> Port:
    if doc["kind"] not in ("input", "state", "weight", "output"):
        raise CortexError(f"unknown port kind {doc['kind']!r}")
    return Port(int(doc["index"]), str(doc["kind"]), str(doc["name"]), _spec_of(doc["spec"]))


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
            if isinstance(value, str):
                files[file] = value.encode("utf-8")
                members[member] = {"file": file, "encoding": "text"}
            else:
                files[file] = bytes(value)
                members[member] = {"file": file, "encoding": "bytes"}
        executables[name] = {"kind": exe.kind, "members": members, "symbols": exe.symbols, "meta": exe.meta}
    split = None
    if program.split is not None:
        split = {"parts": {k: _part_json(p) for k, p in program.split.parts.items()},
                 "stages": [_part_json(p) for p in program.split.stages]}
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
    }


def _decode_program(doc: dict[str, Any], archive: zipfile.ZipFile) -> Program:
    executables = {}
    for name, exe in doc["executables"].items():
        members: dict[str, str | bytes] = {}
        for member, ref in exe["members"].items():
            try:
                raw = archive.read(ref["file"])
            except KeyError:
                raise CortexError(f"executable '{name}': member '{member}' is missing ({ref['file']})") from None
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
                           tuple(_part_of(p, executables) for p in doc["split"]["stages"]))
    return Program(
        entry=str(doc["entry"]),
        args=tuple(_port_of(p) for p in doc["args"]),
        results=tuple(_port_of(p) for p in doc["results"]),
        weights={str(k): float(v) for k, v in doc["weights"].items()},
        states=tuple(StateInfo(str(s["name"]), str(s["kind"]), str(s["reason"])) for s in doc["states"]),
        executables=executables,
        entry_part=_part_of(doc["entry_part"], executables),
        split=split,
        split_error=doc.get("split_error"),
        meta=dict(doc.get("meta", {})),
    )


__all__ = ["FORMAT", "VERSION", "Executable", "FrameSplit", "Part", "Program", "StateInfo"]
