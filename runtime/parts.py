"""A program's frame split, loaded: each part callable on an environment of wired values.

The four parts of the frame split (`Program.split`) and the stages of its
parallel part exchange values by wiring key (`cortex.semantics.abi_facts.WireKey`):
a part reads `env[key]` for each argument key and adds `env[key] = value`
for each result key. `LoadedSplit` also converts between the caller's values
and the generated code's (as `LoadedProgram.__call__` does), and knows
which states are delayed inputs, leading recurrences, recurrences or
read-only (`Program.states`), which is all a scheduler needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from cortex.errors import CortexError
from cortex.runtime.executables import LoadedExecutable, load_executable
from cortex.runtime.generated import call_generated
from cortex.runtime.program import Part, Program
from cortex.runtime.values import RunnerState, aliased, initial_zeros, to_caller, to_internal
from cortex.semantics.abi_facts import FRAME_PARTS, STAGE_KINDS, Port, WireKey, wire

PARTS = FRAME_PARTS


def weight_values(program: Program) -> dict[str, Any]:
    """Each weight port's value as the generated code takes it (checked once, when a program loads)."""
    values = {}
    for port in program.args:
        if port.kind != "weight":
            continue
        if port.name not in program.weights:
            raise CortexError(f"weight '{port.name}' has no value in the program")
        values[port.name] = to_internal(port, program.weights[port.name], f"weight '{port.name}'")
    return values


class PartFunction:
    """One loaded part: takes and returns values by wiring key (`value:3`, `state:x`...)."""

    def __init__(self, part: Part, fn: Callable[..., Any], weights: Mapping[str, Any]):
        self.name = part.name
        self.arg_keys: list[str] = []
        self.weight_slots: list[tuple[int, Any]] = []
        self.arg_slots: list[tuple[int, str]] = []
        for i, text in enumerate(part.args):
            key = WireKey.parse(text)
            if key.kind == "weight":
                if key.ident not in weights:
                    raise CortexError(f"part '{part.name}' reads weight '{key.ident}', which the program has no value for")
                self.weight_slots.append((i, weights[key.ident]))
            else:
                self.arg_slots.append((i, text))
                self.arg_keys.append(text)
        self.result_keys = list(part.results)
        self.arity = len(part.args)
        self.fn = fn

    def values(self, env: Mapping[str, Any]) -> list[Any]:
        """The part's positional arguments: each read from `env` by its wiring key, weights bound."""
        values: list[Any] = [None] * self.arity
        for i, key in self.arg_slots:
            values[i] = env[key]
        for i, w in self.weight_slots:
            values[i] = w
        return values

    def store(self, env: dict[str, Any], results: Iterable[Any]) -> None:
        """Add the part's results to `env`, each by its wiring key."""
        for key, value in zip(self.result_keys, results):
            env[key] = value

    def __call__(self, env: dict[str, Any], index: int | None) -> None:
        """Run on the values in `env`, adding this part's results to it; errors name frame `index` (if any)."""
        values = self.values(env)
        try:
            results = call_generated(self.fn, values, f"the {self.name} part")
        except CortexError as e:
            raise CortexError(f"frame {index}: {e}" if index is not None else str(e)) from e
        except Exception as e:  # a NumPy failure inside generated code
            where = f"frame {index}: " if index is not None else ""
            raise CortexError(f"{where}the {self.name} part failed: {type(e).__name__}: {' '.join(str(e).split())}") from e
        self.store(env, results)


class DerivedStates:
    """The program's derived states (`Program.derived`), kept out of the caller's sight and in step with
    their sources: a derived value is reused while the caller's state still holds the very source object
    it was derived from (`RunnerState.derived`), else recomputed from the caller's source. A source is
    handed out read-only, so an in-place write to it fails instead of going unseen."""

    def __init__(self, program: Program, threads: int | None = None):
        self.program = program
        self.threads = threads  # the loading program's `iree_threads`, for the parts loaded when first needed
        self.parts = {WireKey.parse(p.results[0]).ident: p for p in program.derived}
        self.sources = {name: WireKey.parse(p.args[0]).ident for name, p in self.parts.items()}
        # a source may be only updated (every read of it replaced by derived states): its result port then
        self.ports = {p.name: p for p in (*program.results, *program.args) if p.kind == "state"}
        self._loaded: dict[str, PartFunction] = {}

    def values(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Each derived state's caller value for `state` (a caller's state: `RunnerState` or any dict)."""
        if not self.parts:
            return {}
        for name in self.parts.keys() & state.keys():
            raise CortexError(f"state '{name}' is derived from '{self.sources[name]}' (the program recomputes it): "
                              f"set '{self.sources[name]}' instead")
        carried = state.derived if isinstance(state, RunnerState) else {}
        values = {}
        for name, source in self.sources.items():
            if source not in state:
                raise CortexError(f"state '{source}' is missing from runner.state (runner.reset() restores every state)")
            held = carried.get(name)
            if held is not None and held[0] == source and held[1] is state[source]:
                values[name] = held[2]
            else:
                values[name] = self.recompute(name, state[source])
        return values

    def recompute(self, name: str, source_value: Any) -> Any:
        if name not in self._loaded:
            part = self.parts[name]
            exe = load_executable(self.program.executables[part.executable], threads=self.threads)
            self._loaded[name] = PartFunction(part, exe.function(part.symbol), weight_values(self.program))
        source = self.sources[name]
        env = {wire("state", source): to_internal(self.ports[source], source_value, f"state '{source}'")}
        self._loaded[name](env, None)
        return to_caller(self.ports[name], env[wire("update", name)])

    def initial(self) -> dict[str, Any]:
        """The sources' values before the first frame (zeros), for a source the entry does not read itself."""
        return {s: initial_zeros(self.ports[s].spec, f"state '{s}'") for s in set(self.sources.values())}

    def attach(self, state: dict[str, Any]) -> RunnerState:
        """`state` (every state, derived ones included) as the caller's `RunnerState`."""
        caller = RunnerState({k: v for k, v in state.items() if k not in self.parts})
        for name, source in self.sources.items():
            value = caller.get(source)
            if isinstance(value, np.ndarray) and value.flags.writeable:
                value.flags.writeable = False  # an in-place write would not reach the states derived from it
            caller.derived[name] = (source, value, state[name])
        return caller


class CallBoundary:
    """The caller's side of one frame, whichever way the frame runs (the whole entry, its stages on threads,
    the frame split's parts in order or in flight): the one place that counts the arguments, checks and
    converts inputs and state, and hands back outputs and state, so every path says and returns the same.

    Values cross it by wiring key: `enter` gives the environment a frame starts from (`input:i`,
    `state:x`), `outputs` reads the one it ends with (`output:k`, `update:x`).
    """

    def __init__(self, program: Program, threads: int | None = None):
        self.entry = program.entry
        self.input_ports: list[Port] = program.inputs
        self.output_ports = [p for p in program.results if p.kind == "output"]
        self.state_ports = {p.name: p for p in program.args if p.kind == "state"}  # states read
        self.update_ports = {p.name: p for p in program.results if p.kind == "state"}  # states written
        self.derived = DerivedStates(program, threads)
        self.input_keys = [wire("input", p.index) for p in self.input_ports]
        self.output_keys = [wire("output", k) for k in range(len(self.output_ports))]
        states = {**self.state_ports, **self.update_ports}
        self.state_keys = {n: wire("state", n) for n in states}
        self.update_keys = {n: wire("update", n) for n in states}
        self._plain = plain_signature(self.input_ports)
        self._signed_tensors = [p.spec.shape is not None and not p.spec.unsigned for p in self.output_ports]
        self.stateless = not states and not self.derived.parts
        """No state to read or write: a call is its inputs and outputs alone."""

    def inputs(self, args: tuple[Any, ...]) -> dict[str, Any]:
        """The caller's arguments by wiring key, as the generated code takes them (the count checked here)."""
        if len(args) != len(self.input_ports):
            raise CortexError(f"@{self.entry} takes {len(self.input_ports)} argument(s), got {len(args)}")
        plain = self._plain
        if plain is not None:
            for v, (dtype, shape) in zip(args, plain):
                if type(v) is not np.ndarray or v.dtype != dtype or v.shape != shape:
                    break
            else:
                return dict(zip(self.input_keys, args))  # what `to_internal` would return, without its checks
        return {
            key: to_internal(p, v, f"argument #{k} (%{p.name}) of @{self.entry}")
            for k, (key, p, v) in enumerate(zip(self.input_keys, self.input_ports, args))
        }

    def internal_state(self, state: object) -> dict[str, Any]:
        """The caller's state (`runner.state`) by state name as the parts take it, derived states included."""
        if not isinstance(state, dict):
            raise CortexError(f"runner.state must be a dict of state name to value, got {type(state).__name__}")
        for name in self.state_ports:
            if name not in state and name not in self.derived.parts:
                raise CortexError(f"state '{name}' is missing from runner.state (runner.reset() restores every state)")
        derived = self.derived.values(state)
        return {name: to_internal(port, derived[name] if name in derived else state[name], f"state '{name}'")
                for name, port in self.state_ports.items()}

    def state_env(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """States by name (as the parts take them) by wiring key: what a frame reads as `state:x`."""
        keys = self.state_keys
        return {keys[name]: value for name, value in values.items()}

    def updates(self, env: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
        """The values `env` holds for states `names` after the frame (`update:x`), by state name."""
        keys = self.update_keys
        return {name: env[keys[name]] for name in names}

    def enter(self, args: tuple[Any, ...], state: object) -> dict[str, Any]:
        """The environment one frame starts from: its inputs, then the caller's state (checked in that order)."""
        env = self.inputs(args)
        if self.stateless:
            if not isinstance(state, dict):
                self.internal_state(state)  # its message
        else:
            env.update(self.state_env(self.internal_state(state)))
        return env

    def outputs(self, env: Mapping[str, Any], args: tuple[Any, ...]) -> tuple[tuple[Any, ...], RunnerState]:
        """The caller's outputs and the caller's state after this frame.

        An output sharing memory with a state value or with the frame's inputs is copied: frames read
        ahead already hold those arrays (the next frame's delayed inputs, the recurrence's last value),
        and the caller may write into what it is handed while they are still in flight.
        """
        if self.stateless:  # only outputs: each copied if it shares the caller's inputs' memory
            return tuple(o.copy() if isinstance(o, np.ndarray) and aliased(o, (), args) else o
                         for o in self.caller_outputs(env)), RunnerState()
        before, after = self.state_keys, self.update_keys
        internal = {n: env.get(after[n], env.get(before[n])) for n in before}
        held = [v for n in self.state_ports for v in (env.get(before[n]), internal[n]) if isinstance(v, np.ndarray)]
        outputs = tuple(
            o.copy() if isinstance(o, np.ndarray) and aliased(o, held, args) else o for o in self.caller_outputs(env)
        )
        return outputs, self.caller_state(internal, outputs, args)

    def caller_outputs(self, env: Mapping[str, Any]) -> tuple[Any, ...]:
        outputs = []
        for key, port, signed_tensor in zip(self.output_keys, self.output_ports, self._signed_tensors):
            value = env[key]
            # an array of our own, signed: what `to_caller` would return (checked here, per call, for speed)
            outputs.append(value if signed_tensor and type(value) is np.ndarray and value.flags.writeable else to_caller(port, value))
        return tuple(outputs)

    def caller_state(self, internal: Mapping[str, Any], outputs: tuple[Any, ...], args: tuple[Any, ...]) -> RunnerState:
        state = {}
        for name, port in {**self.state_ports, **self.update_ports}.items():
            value = to_caller(port, internal[name])
            if hasattr(value, "shape") and aliased(value, outputs, args):
                value = value.copy()  # the caller may reuse its buffers or write into outputs
            state[name] = value
        return self.derived.attach(state)


def plain_signature(inputs: list[Port]) -> list[tuple[np.dtype[Any], tuple[int, ...]]] | None:
    """(dtype, shape) per input when every input is a statically shaped signed tensor: then an array that
    matches needs no conversion (one comparison per argument). None otherwise."""
    signature = []
    for port in inputs:
        spec = port.spec
        if spec.unsigned or spec.shape is None or spec.dtype is None or any(d < 0 for d in spec.shape):
            return None
        signature.append((np.dtype(spec.dtype), spec.shape))
    return signature


BETWEEN_STAGES = tuple(f"{kind}:" for kind in STAGE_KINDS)
"""Wiring keys of values one stage hands to another of the same part: not the part's own arguments or results."""


class InOrder:
    """The stages of a stage-split part (parallel or delayed), one after the other."""

    def __init__(self, name: str, stages: list[PartFunction]):
        self.name = name
        self.stages = stages
        self.arg_keys = list(dict.fromkeys(k for s in stages for k in s.arg_keys if not k.startswith(BETWEEN_STAGES)))
        self.result_keys = [k for s in stages for k in s.result_keys if not k.startswith(BETWEEN_STAGES)]

    def __call__(self, env: dict[str, Any], index: int | None) -> None:
        for stage in self.stages:
            stage(env, index)


class LoadedSplit:
    """The frame split of a program, loaded: its parts (and stages) wired, the caller's boundary."""

    def __init__(self, program: Program, profile: bool = False, stages: bool = False, threads: int | None = None):
        """`stages`: the parallel and delayed parts as their stages in order, where the program has them
        (always so for a program whose backend says `split_in_stages`: on IREE each cut compiles to its own
        code, so every engine runs one cut)."""
        stages = stages or program.backend.split_in_stages
        split = program.frame_split()
        weights = weight_values(program)
        self.entry = program.entry
        loaded: dict[str, LoadedExecutable] = {}

        def load(part: Part) -> PartFunction:
            if part.executable not in loaded:
                loaded[part.executable] = load_executable(program.executables[part.executable], profile, threads)
            return PartFunction(part, loaded[part.executable].function(part.symbol), weights)

        self.stages = [load(s) for s in split.stages] if stages else []
        self.delayed_stages = [load(s) for s in split.delayed_stages] if stages else []
        staged = {"parallel": self.stages, "delayed": self.delayed_stages}
        parts: dict[str, PartFunction | InOrder] = {}
        for name in PARTS:
            parts[name] = InOrder(name, staged[name]) if staged.get(name) else load(split.parts[name])
        self.parts = parts
        self.sections: dict[str, Any] = {}
        if profile:
            for exe in loaded.values():
                concurrent = getattr(exe, "concurrent_sections", None)
                self.sections.update(concurrent() if concurrent is not None else exe.sections)
        self.boundary = CallBoundary(program, threads)
        self.input_ports = self.boundary.input_ports
        self.output_ports = self.boundary.output_ports
        self.state_ports = self.boundary.state_ports  # states read
        self.update_ports = self.boundary.update_ports  # states written
        self.delayed = program.states_of("delayed")
        self.leading = program.states_of("leading")
        self.ahead = [s.name for s in program.states if s.kind in ("delayed", "leading")]  # the delayed part's updates
        self.recurrent = program.states_of("recurrence")
        self.read_only = program.states_of("read-only")
        self.derived = self.boundary.derived

    # ---- the boundary with the caller (`CallBoundary`)

    def inputs(self, args: tuple[Any, ...]) -> dict[str, Any]:
        return self.boundary.inputs(args)

    def enter(self, args: tuple[Any, ...], state: object) -> dict[str, Any]:
        return self.boundary.enter(args, state)

    def state_env(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return self.boundary.state_env(values)

    def updates(self, env: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
        return self.boundary.updates(env, names)

    def internal_state(self, state: object) -> dict[str, Any]:
        return self.boundary.internal_state(state)

    def outputs(self, env: Mapping[str, Any], args: tuple[Any, ...]) -> tuple[tuple[Any, ...], RunnerState]:
        return self.boundary.outputs(env, args)

    def caller_outputs(self, env: Mapping[str, Any]) -> tuple[Any, ...]:
        return self.boundary.caller_outputs(env)

    def caller_state(self, internal: Mapping[str, Any], outputs: tuple[Any, ...], args: tuple[Any, ...]) -> RunnerState:
        return self.boundary.caller_state(internal, outputs, args)

    # ---- one frame, all parts in order (what the engines reorder)

    def step(self, env: dict[str, Any], index: int | None) -> dict[str, Any]:
        for name in PARTS:
            self.parts[name](env, index)
        return env


__all__ = ["PARTS", "CallBoundary", "DerivedStates", "InOrder", "LoadedSplit", "PartFunction", "weight_values"]
