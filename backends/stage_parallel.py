"""One frame's independent stages at once: `cortex.compile(module, workers=N)`.

The entry is frame-split (`cortex.passes.frame_split`) and its parallel part
cut into one function per stage (`cortex.passes.stage_split`). A call runs
the delayed part, then every stage as soon as the stages it reads have
finished, on N threads (OpenCV and NumPy release the GIL: text_roi and
scene_change overlap), then the recurrence and the tail. The values are
those of the sequential call (same ops, same inputs); the frame's latency
approaches the critical path (gray → blur → text_roi → fusion → encoder).
The threads live for the call only, so nothing is left behind.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from cortex.backends.frame_parallel import SplitProgram, _PartFunction, thread_budget


def stage_program_for(compiled) -> SplitProgram:
    """The stage-split program of a `CompiledPipeline` (built on first use, then kept on it)."""
    if getattr(compiled, "backend", "numpy") == "iree":  # the one program every engine runs on IREE
        from cortex.backends.frame_parallel import split_program_for

        return split_program_for(compiled)
    program = getattr(compiled, "_stage_program", None)
    if program is None:
        weights = {p.name: compiled._weights[p.index] for p in compiled.args if p.kind == "weight"}
        outputs = [p for p in compiled.results if p.kind == "output"]
        states = {p.name: p for p in compiled.args if p.kind == "state"}
        updates = {p.name: p for p in compiled.results if p.kind == "state"}
        program = SplitProgram(compiled.cortex_module, compiled.entry, weights, compiled.inputs, outputs, states, updates,
                               compiled.lower_module, stages=True, backend=compiled.backend, device=compiled.device)
        compiled._stage_program = program
    return program


def run_stages(stages: list[_PartFunction], env: dict[str, Any], index: int | None, pool: ThreadPoolExecutor) -> None:
    """Each stage as soon as the stages whose results it reads are done; the first failure is raised."""
    producer = {key: k for k, s in enumerate(stages) for key in s.result_keys}
    needs = [{producer[key] for key in s.arg_keys if key in producer and producer[key] != k} for k, s in enumerate(stages)]
    started: set[int] = set()
    done: set[int] = set()
    running: dict[Future, int] = {}
    try:
        while len(done) < len(stages):
            for k, s in enumerate(stages):
                if k not in started and needs[k] <= done:
                    started.add(k)
                    running[pool.submit(s, env, index)] = k
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
                done.add(running.pop(future))
    finally:
        for future in running:
            future.cancel()


def call_with_concurrent_stages(compiled, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """`compiled(*inputs)` with the frame's independent stages on `compiled.workers` threads."""
    program = stage_program_for(compiled)
    env = program.inputs(inputs, compiled.entry)
    env.update({f"state:{n}": v for n, v in program.internal_state(compiled.state).items()})
    parts = program.parts
    with thread_budget(compiled.workers), ThreadPoolExecutor(compiled.workers, thread_name_prefix="cortex-stage") as pool:
        parts["delayed"](env, None)
        run_stages(program.stages, env, None, pool)
        parts["recurrence"](env, None)
        parts["tail"](env, None)
    outputs, compiled.state = program.outputs(env, inputs)
    return outputs


__all__ = ["call_with_concurrent_stages", "run_stages", "stage_program_for"]
