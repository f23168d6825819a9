"""Mutants over the engines (the frames-in-flight loop, threads, processes, chunks), the memory policy, BLAS holds."""

from mutant import Mutant

T_FLIGHT = "tests/test_frames_in_flight.py"
T_PAR = "tests/test_frame_parallel.py"
T_TABLE = "tests/test_engine_table.py"
T_BLAS = "tests/test_blas_hold.py"
T_MEM = "tests/test_memory_policy.py"
T_MIF = "tests/test_modes_in_flight.py"
T_PROC = "tests/test_process_engine.py"
T_CHAIN = "tests/test_process_engine_chain.py"
T_OPT = "tests/test_option_bounds.py"

FL = "runtime/engines/flight.py"
TH = "runtime/engines/threads.py"

MUTANTS = [
    Mutant("huntflight-flight-window-zero", FL, "window = max(window, 1)", "window = max(window, 0)",
           (T_FLIGHT, T_PAR)),
    Mutant("huntflight-flight-window-overfull", FL, "while not exhausted and len(fronts) + len(tails) < window:",
           "while not exhausted and len(fronts) + len(tails) <= window:", (T_FLIGHT, T_PAR)),
    Mutant("huntflight-flight-failed-item-drops-earlier", FL,
           "                    while tails:  # the items before the failing one still come out, then its error\n"
           "                        yield from executor.finish(tails.popleft())\n", "", (T_FLIGHT, T_PAR)),
    Mutant("huntflight-flight-no-close", FL, "        executor.close([*fronts, *tails])", "        pass",
           (T_FLIGHT, T_PAR)),
    Mutant("huntflight-flight-close-fronts-only", FL, "executor.close([*fronts, *tails])", "executor.close([*fronts])",
           (T_FLIGHT, T_PAR)),
    Mutant("huntflight-flight-live-waits-for-next-item", FL,
           "if ready is not None and (fronts or tails) and not ready(0.0):",
           "if ready is not None and (fronts or tails) and not ready(1.0):", (T_FLIGHT, "tests/test_live_sources.py")),
    Mutant("huntflight-flight-tail-newest-first", FL, "yield from executor.finish(tails.popleft())\n            elif fronts and",
           "yield from executor.finish(tails.pop())\n            elif fronts and", (T_FLIGHT, T_PAR)),
    Mutant("huntflight-threads-recurrence-state-not-kept", TH,
           "        self.state.update(split.updates(env, split.recurrent))\n        return i,",
           "        return i,", (T_PAR, T_MIF)),
    Mutant("huntflight-threads-no-hand-back", TH, "        self.run.hand_back(state)\n", "", (T_PAR, T_MIF)),
    Mutant("huntflight-threads-stale-not-recomputed", TH, "            if stale & set(reads):",
           "            if False:", (T_MIF,)),
    Mutant("huntflight-threads-index-not-advanced", TH, "        self.index += 1\n", "", (T_PAR, T_MIF)),
    Mutant("huntflight-threads-budget-dropped", TH,
           "    with thread_budget(run.workers):\n        yield from", "    if True:\n        yield from",
           (T_PAR, T_BLAS, "tests/test_frame_work.py")),
    Mutant("huntflight-threads-pool-not-shut", TH, "        self.pool.shutdown(wait=True, cancel_futures=True)\n",
           "", (T_PAR, T_FLIGHT)),
    Mutant("huntflight-base-unknown-unsorted", "runtime/engines/base.py",
           "unknown = sorted(set(options) - set(takes), key=str)", "unknown = list(set(options) - set(takes))",
           (T_TABLE,)),
    Mutant("huntflight-base-unknown-accepted", "runtime/engines/base.py",
           "    if not unknown:\n        return\n    if not takes:", "    if True:\n        return\n    if not takes:",
           (T_TABLE, T_OPT)),
    Mutant("huntflight-processes-chunk-max-off", "runtime/engines/processes/__init__.py",
           "MAX_CHUNK = 4096", "MAX_CHUNK = 4095", (T_TABLE,)),
    Mutant("huntflight-processes-chunk-zero", "runtime/engines/processes/__init__.py",
           'whole_number("chunk", options.get("chunk", CHUNK), 1, MAX_CHUNK)',
           'whole_number("chunk", options.get("chunk", CHUNK), 0, MAX_CHUNK)', (T_TABLE,)),
    Mutant("huntflight-chunks-of-drops-last", "runtime/engines/chunk_worker.py",
           "    while chunk := list(itertools.islice(it, size)):\n        yield chunk",
           "    while len(chunk := list(itertools.islice(it, size))) == size:\n        yield chunk",
           (T_CHAIN, T_PROC)),
    Mutant("huntflight-settle-chunk-delayed-first-frame", "runtime/engines/chunk_worker.py",
           'state.update(values[-1].pop("delayed"))', 'state.update(values[0].pop("delayed"))', (T_CHAIN, T_PROC)),
    Mutant("huntflight-memory-arena-two", "runtime/memory_policy.py", "KEPT = {M_ARENA_MAX: 1,", "KEPT = {M_ARENA_MAX: 2,",
           (T_MEM,)),
    Mutant("huntflight-memory-refusal-hidden", "runtime/memory_policy.py",
           "if mallopt(param, value) != 1]", "if mallopt(param, value) == 0 and False]", (T_MEM,)),
    Mutant("huntflight-blas-hold-no-restore", "runtime/blas.py", "        for lib, n in self._restore:\n            lib.set(n)\n",
           "", (T_BLAS,)),
    Mutant("huntflight-blas-hold-overrides-owner", "runtime/blas.py",
           "if now is not None and now != self.threads and not lib.owned_elsewhere():",
           "if now is not None and now != self.threads:", (T_BLAS,)),
    Mutant("huntflight-blas-limit-none-holds", "runtime/blas.py",
           "    if threads is None or not blas_libraries():\n        return contextlib.nullcontext()",
           "    if not blas_libraries():\n        return contextlib.nullcontext()", (T_BLAS, "tests/test_frame_work.py")),
    Mutant("huntflight-parts-derived-threads-dropped", "runtime/parts.py",
           "self.derived = DerivedStates(program, threads)", "self.derived = DerivedStates(program)",
           ("tests/test_state_edits.py", "tests/test_call_boundary.py")),
    Mutant("huntflight-pool-prepass-threads-per-2", "runtime/engines/processes/pool.py",
           "return max(1, workers // 4)", "return max(1, workers // 2)", (T_PROC, T_CHAIN)),
    Mutant("huntflight-pool-kept-for-other-count", "runtime/engines/processes/pool.py",
           "if pool is not None and (pool.workers != workers or (chain and pool.chain_thread is None)):",
           "if pool is not None and (chain and pool.chain_thread is None):", (T_PROC, T_CHAIN)),
    Mutant("huntflight-pool-cpu-children-fields", "runtime/engines/processes/pool.py",
           "total += (int(fields[11]) + int(fields[12]))", "total += (int(fields[13]) + int(fields[14]))",
           (T_PROC, T_CHAIN)),
    Mutant("huntflight-pool-dropped-not-closed", "runtime/engines/processes/pool.py",
           "        pool = _POOLS.pop(pipeline, None)\n    if pool is not None:\n        pool.close()",
           "        pool = _POOLS.pop(pipeline, None)", (T_PROC, T_CHAIN)),
]
