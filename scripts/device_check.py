"""The IREE backend's device check: compile here, run on a GPU machine. Driven by device_check.sh.

    python3 scripts/device_check.py prepare .devcheck   # here: needs iree-base-compiler, onnxruntime
    python3 scripts/device_check.py run .devcheck       # there: needs only iree-base-runtime, xdsl, numpy,
                                                        # onnxruntime, opencv (and this repository as `cortex`)

`prepare` lowers the tensor graphs (the three ONNX models through the ONNX backend's IREE path — NHWC,
outlined —, a batch-16 large CNN, the dialect's example graphs and the int8 small CNN), checks each is ONE
segment (the whole entry), and compiles it twice: for `cuda` (sm_80 PTX, JIT-compiled by the driver on
Hopper) and for `cpu-portable` (x86-64-v4: AVX-512, which H100/H200 hosts have). Beside each
.vmfb: the segment's signature, a seeded input, the reference outputs (the reference interpreter, or
ONNX Runtime for the ONNX models) and, for the ONNX models, the .onnx file (the benchmark's ORT session).

`run` loads every .vmfb with IREE's runtime only (`cortex.runtime.iree_runtime`), checks the outputs on
cuda, local-task and local-sync against the saved references, times IREE cuda / local-task / local-sync
against ONNX Runtime on the CPU (1 thread and all cores; interleaved, medians and minima), and times the
main job — the L2 pipeline on the NumPy backend, frame-parallel on threads, processes and Ray (where installed)
— on 1, 2, 4, 8 and 16 workers, each run checked against the sequential run.
Where there is no CUDA device the cuda rows say so and the rest runs. Everything prints as compact tables.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

RTOL, ATOL = 1e-4, 1e-5
TARGETS = ("cuda", "cpu-portable")


# ---------------------------------------------------------------- prepare (here)


def graphs():
    """(name, lowered module, entry, input arrays, reference outputs, onnx model or None)."""
    import onnxruntime as ort

    import cortex
    from cortex.backends.backend import BACKENDS
    from cortex.examples.small_cnn import ENTRY as CNN_ENTRY
    from cortex.examples.small_cnn import build_small_cnn, small_cnn_inputs
    from cortex.examples.tensor_graphs import EXAMPLES
    from cortex.frontends.onnx import ENTRY, from_onnx
    from cortex.frontends.onnx_models import cnn, cnn_large, mlp, sample_input

    for name, model in (("cnn", cnn()), ("mlp", mlp()), ("cnn_large", cnn_large()), ("cnn_large_b16", cnn_large(batch=16))):
        module = from_onnx(model)
        cortex.run_passes(module, BACKENDS["iree"].legalisation())  # the layout IREE's code wants
        x = sample_input(model)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        yield name, cortex.lower(module), ENTRY, [x], session.run(None, {"x": x}), model
    for name, spec in sorted(EXAMPLES.items()):
        module = cortex.parse(str(spec.path))
        inputs = list(spec.make_inputs(0))
        yield name, cortex.lower(module), spec.entry, inputs, list(cortex.reference(module, entry=spec.entry, mode=None)(*inputs)), None
    qmodule, _ = cortex.quantize(build_small_cnn(), small_cnn_inputs(16))
    x = small_cnn_inputs(1, seed=9)[0]
    yield "small_cnn_int8", cortex.lower(qmodule), CNN_ENTRY, [x], list(cortex.reference(qmodule, entry=CNN_ENTRY, mode=None)(x)), None


def prepare(out: Path) -> None:
    import onnx

    from cortex.backends.iree.program import IreeProgram

    # the check runs IREE's code for every graph, small ones too: the outlining cost rule (which keeps runs
    # that do little work per element crossing on NumPy) is switched off, as in the tests of the backend
    os.environ.update({"CORTEX_IREE_MIN_INTENSITY": "0", "CORTEX_IREE_MIN_WORK": "0"})
    out.mkdir(parents=True, exist_ok=True)
    index = []
    for name, lowered, entry, inputs, outputs, model in graphs():
        entry_meta = None
        for target in TARGETS:
            start = time.perf_counter()
            program = IreeProgram(lowered, target=target, load=False)
            segment = program.whole_entry(entry)
            if segment is None or program.vmfb is None:
                raise SystemExit(f"{name}: @{entry} is not one IREE segment ({program.segment_names})")
            (out / f"{name}.{target}.vmfb").write_bytes(program.vmfb)
            entry_meta = {"function": segment, **program.signatures()[segment]}
            print(f"  {name:<18} {target:<13} {len(program.vmfb):>9} bytes  {time.perf_counter() - start:5.1f} s", flush=True)
        arrays: dict[str, Any] = {f"input{i}": np.asarray(v) for i, v in enumerate(inputs)}
        arrays.update({f"output{i}": np.asarray(v) for i, v in enumerate(outputs)})
        np.savez(out / f"{name}.npz", **arrays)
        if model is not None:
            onnx.save(model, str(out / f"{name}.onnx"))
        index.append({"name": name, **(entry_meta or {}), "inputs": len(inputs), "outputs": len(outputs),
                      "onnx": model is not None})
    (out / "index.json").write_text(json.dumps(index, indent=1))
    print(f"prepared {len(index)} graphs x {len(TARGETS)} targets in {out}")


# ---------------------------------------------------------------- run (there)


def median_min(fn, rounds: int, block: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds * block):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), 1e3 * min(times)


def interleaved(contenders: dict, rounds: int, block: int) -> dict[str, tuple[float, float]]:
    samples: dict[str, list[float]] = {k: [] for k in contenders}
    for r in range(rounds):
        for name, fn in (list(contenders.items()) if r % 2 == 0 else list(contenders.items())[::-1]):
            for _ in range(block):
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    return {k: (1e3 * statistics.median(v), 1e3 * min(v)) for k, v in samples.items()}


def load_functions(directory: Path, item: dict) -> tuple[dict, dict[str, str]]:
    """driver → callable for this graph; driver → why it is missing."""
    from cortex.errors import CortexError
    from cortex.runtime.iree_runtime import LoadedModule

    functions, missing = {}, {}
    avx512 = "avx512f" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else False
    for driver, target in (("cuda", "cuda"), ("local-task", "cpu-portable"), ("local-sync", "cpu-portable")):
        if target == "cpu-portable" and not avx512:
            missing[driver] = "this CPU has no AVX-512 (the CPU code is compiled for x86-64-v4)"
            continue
        try:
            loaded = LoadedModule((directory / f"{item['name']}.{target}.vmfb").read_bytes(), driver)
            functions[driver] = loaded.function(item["function"], item["args"], item["results"])
        except (CortexError, RuntimeError, OSError) as e:
            missing[driver] = " ".join(str(e).split())[:90]
    return functions, missing


def run(directory: Path, quick: bool) -> int:
    import iree.runtime as rt

    cores = os.cpu_count() or 1
    rt.flags.parse_flags(f"--task_topology_max_group_count={cores}")
    index = json.loads((directory / "index.json").read_text())
    print(f"# device check: {cores} CPUs, IREE drivers {rt.query_available_drivers()}, python {sys.version.split()[0]}")
    failures = 0
    loaded = {}
    print("\n## equality against the saved references (rtol 1e-4, atol 1e-5)")
    print(f"{'graph':<18} {'driver':<11} {'max |diff|':>11}  result")
    for item in index:
        data = np.load(directory / f"{item['name']}.npz")
        inputs = [data[f"input{i}"] for i in range(item["inputs"])]
        wants = [data[f"output{i}"] for i in range(item["outputs"])]
        functions, missing = load_functions(directory, item)
        loaded[item["name"]] = (functions, inputs)
        for driver, why in missing.items():
            print(f"{item['name']:<18} {driver:<11} {'-':>11}  skipped: {why}")
        for driver, fn in functions.items():
            gots = fn(*inputs)
            diff = max(float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(gots, wants))
            ok = all(g.shape == w.shape and np.allclose(g, w, rtol=RTOL, atol=ATOL) for g, w in zip(gots, wants))
            failures += not ok
            print(f"{item['name']:<18} {driver:<11} {diff:11.2e}  {'ok' if ok else 'WRONG'}")

    print("\n## time per call, ms (median / min); ratio = ORT 1 thread / contender (>1: faster than ORT)")
    import onnxruntime as ort

    rounds, block = (3, 5) if quick else (8, 10)
    header = f"{'graph':<15} {'ORT 1 thr':>15} {f'ORT {cores} thr':>15} {'IREE cuda':>15} {'IREE task':>15} {'IREE sync':>15}"
    print(header)
    for item in index:
        if not item["onnx"]:
            continue
        functions, inputs = loaded[item["name"]]
        model_bytes = (directory / f"{item['name']}.onnx").read_bytes()
        contenders = {}
        for threads in (1, cores):
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
            contenders[f"ort{threads}"] = (lambda s, x: lambda: s.run(None, {"x": x}))(session, inputs[0])
        for driver in ("cuda", "local-task", "local-sync"):
            if driver in functions:
                contenders[driver] = (lambda f, xs: lambda: f(*xs))(functions[driver], inputs)
        for fn in contenders.values():
            fn()
        times = interleaved(contenders, rounds, block)
        base = times["ort1"][0]
        cells = []
        for key in ("ort1", f"ort{cores}", "cuda", "local-task", "local-sync"):
            if key in times:
                m, lo = times[key]
                cells.append(f"{m:6.3f}/{lo:6.3f} {base / m:4.1f}x" if key != "ort1" else f"{m:7.3f}/{lo:7.3f}")
            else:
                cells.append("-")
        print(f"{item['name']:<15} " + " ".join(f"{c:>15}" for c in cells))

    print("\n## the main job: L2 pipeline 480x640, NumPy backend, frame-parallel threads, processes and Ray")
    failures += scaling(quick)
    print(f"\ndevice check: {'PASS' if failures == 0 else f'{failures} FAILURE(S)'}")
    return 1 if failures else 0


SCALING_ENGINES = ("threads", "processes", "ray")
FRAMES_A_WORKER = 24
"""Frames a run per worker (at least 96): 3 chunks a worker for the chunked engines, so a run measures frames/s,
not filling and draining 16 workers (96 frames are 12 chunks of 8: 16 workers could never all be busy)."""


def scaling_lines(rates: dict[int, dict[str, float]], equal: dict[int, dict[str, bool]], skipped: dict[str, str]) -> list[str]:
    """The scaling table: a row per worker count, per engine its frames/s, speed-up over its own 1-worker
    rate, efficiency (speed-up / workers) and whether every output and the state equal the sequential run."""
    engines = [e for e in SCALING_ENGINES if any(e in r for r in rates.values())]
    head = f"{'workers':>7} " + " ".join(f"{e + ' f/s':>15} {'speed-up':>8} {'eff':>5} {'eq':>3}" for e in engines)
    lines = [head]
    base = {e: next((r[e] for r in rates.values() if e in r), 0.0) for e in engines}
    for workers, row in rates.items():
        cells = []
        for e in engines:
            if e not in row:
                cells.append(f"{'-':>15} {'-':>8} {'-':>5} {'-':>3}")
                continue
            up = row[e] / base[e] if base[e] else 0.0
            cells.append(f"{row[e]:15.1f} {up:7.2f}x {up / workers:5.0%} {'yes' if equal[workers][e] else 'NO':>3}")
        lines.append(f"{workers:>7} " + " ".join(cells))
    lines += [f"({e}: {why})" for e, why in skipped.items()]
    return lines


def scaling(quick: bool, size: tuple[int, int] = (480, 640), counts: tuple[int, ...] | None = None,
            engines: tuple[str, ...] = SCALING_ENGINES) -> int:
    """The L2 pipeline's frames/s on every engine (Ray where it is installed) and worker count up to the
    cores, interleaved per count (medians), each run's outputs and state checked against the sequential run;
    returns the number of runs that differ."""
    import cortex
    from cortex.runtime.engines.processes import close_pools, worker_cpu_seconds
    from cortex.video.synthetic import SyntheticVideo

    cores = os.cpu_count() or 1
    counts = counts or tuple(c for c in (1, 2, 4, 8, 16) if c <= cores)
    skipped: dict[str, str] = {}
    if "ray" in engines:
        try:
            import ray  # noqa: F401
        except ImportError:
            skipped["ray"] = "not installed here"
            engines = tuple(e for e in engines if e != "ray")
    rounds = 1 if quick else 3
    runs = {w: 16 if quick else max(96, FRAMES_A_WORKER * w) for w in counts}  # frames a run, per worker count
    n = max(runs.values())
    video = SyntheticVideo(*size)
    frames = [video.frame(i) for i in range(n)]
    compiled = cortex.compile(cortex.build_l2_pipeline(*size))
    compiled.reset()
    want, want_state = [], {}  # the sequential run's outputs, and its state after each run's length
    for f in frames:
        want.append(compiled(f))
        if len(want) in runs.values():
            want_state[len(want)] = dict(compiled.state)
    options: dict[str, dict[str, Any]] = {}
    if "ray" in engines:  # one Ray and its actors kept across a worker count's runs, as a user's RaySession keeps them
        from cortex.runtime.engines.ray import RaySession

        options["ray"] = {"session": RaySession(num_cpus=cores)}
    lengths = sorted(set(runs.values()))
    length = f"{lengths[0]} frames a run" if len(lengths) == 1 else \
        f"{lengths[0]} to {lengths[-1]} frames a run ({FRAMES_A_WORKER} a worker, at least {lengths[0]})"
    print(f"L2 pipeline {size[0]}x{size[1]}, NumPy backend, {length}, medians of {rounds}, {cores} CPUs", flush=True)
    rates: dict[int, dict[str, float]] = {}
    equal: dict[int, dict[str, bool]] = {}
    caller: dict[int, float] = {}  # the processes engine's caller CPU a frame (all its threads), in ms
    work: dict[int, dict[str, float]] = {}  # each engine's CPU a frame, its worker processes' included, in ms
    try:
        for workers in counts:
            batch, expect = frames[: runs[workers]], want[: runs[workers]]
            samples: dict[str, list[float]] = {e: [] for e in engines}
            cpu: list[float] = []
            spent: dict[str, list[float]] = {e: [] for e in engines if e != "ray"}  # Ray's actors: not ours to read
            equal[workers] = {}
            for e in engines:  # pools and actors start here, apart from the timed runs
                compiled.reset()
                list(compiled.run_video(frames[: 2 * workers], workers=workers, engine=e, **options.get(e, {})))
            for r in range(rounds):
                for e in engines if r % 2 == 0 else engines[::-1]:
                    compiled.reset()
                    start, own, elsewhere = time.perf_counter(), time.process_time(), worker_cpu_seconds(compiled)
                    got = list(compiled.run_video(batch, workers=workers, engine=e, **options.get(e, {})))
                    samples[e].append(time.perf_counter() - start)
                    if e == "processes":
                        cpu.append((time.process_time() - own) / len(batch))
                    if e in spent:
                        spent[e].append((time.process_time() - own + worker_cpu_seconds(compiled) - elsewhere) / len(batch))
                    same = len(got) == len(expect) and all(
                        all(np.asarray(a).tobytes() == np.asarray(b).tobytes() for a, b in zip(g, w)) for g, w in zip(got, expect))
                    same = same and all(np.asarray(compiled.state[k]).tobytes() == np.asarray(v).tobytes()
                                        for k, v in want_state[runs[workers]].items())
                    equal[workers][e] = equal[workers].get(e, True) and same
            rates[workers] = {e: len(batch) / statistics.median(v) for e, v in samples.items()}
            if cpu:
                caller[workers] = 1e3 * statistics.median(cpu)
            work[workers] = {e: 1e3 * statistics.median(v) for e, v in spent.items()}
            table = scaling_lines(rates, equal, {})  # each row as its count ends: a timeout keeps the rows done
            print("\n".join(table if len(rates) == 1 else table[-1:]), flush=True)
    finally:
        close_pools()
        if "ray" in options:
            options["ray"]["session"].close()
    for line in scaling_lines(rates, equal, skipped)[len(rates) + 1:]:  # what did not run, and why
        print(line, flush=True)
    if caller:  # the caller's serial work bounds the processes engine at about 1000 / ms frames/s
        print("processes engine, the caller's CPU a frame: " + ", ".join(f"{w}: {ms:.1f} ms" for w, ms in caller.items()),
              flush=True)
    for e in (e for e in engines if e != "ray"):  # the work a frame costs: where it grows with workers, not the GIL
        print(f"{e} engine, CPU a frame (all its processes): "
              + ", ".join(f"{w}: {row[e]:.1f} ms" for w, row in work.items() if e in row), flush=True)
    return sum(not ok for row in equal.values() for ok in row.values())


def main() -> int:
    if sys.argv[1:2] == ["scaling"]:  # the scaling table alone (no IREE needed): python3 scripts/device_check.py scaling
        return 1 if scaling(quick="--quick" in sys.argv) else 0
    if len(sys.argv) < 3 or sys.argv[1] not in ("prepare", "run"):
        print(__doc__.split("\n\n")[1])
        return 2
    directory = Path(sys.argv[2])
    if sys.argv[1] == "prepare":
        prepare(directory)
        return 0
    return run(directory, quick="--quick" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
