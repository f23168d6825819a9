"""Mutants over cortex-run's tools (frame log, outputs, live runs, requests, batch manifest) and the live sources."""

from mutant import Mutant

T_OUT = "tests/test_cortex_run_outputs.py"
T_LOG = "tests/test_frame_log.py"
T_ROWS = "tests/test_scores_jsonl.py"
T_LIVE = "tests/test_live_sources.py"
T_REQ = "tests/test_requests.py"
T_BATCH = "tests/test_batch_records.py"
T_OUTDIR = "tests/test_batch_out_dir.py"
T_PATHS = "tests/test_output_paths.py"
T_SAFE = "tests/test_output_safety.py"

MUTANTS = [
    Mutant("hunttools-frame-log-skip-count-ignores-gate", "tools/frame_log.py",
           "            if probed and results[3]:\n                skipped += 1",
           "            if probed:\n                skipped += 1", (T_LOG, T_OUT, "tests/test_cortex_run_ux.py")),
    Mutant("hunttools-frame-log-error-number-off", "tools/frame_log.py",
           'raise CortexError(f"frame {count}: {e}") from e', 'raise CortexError(f"frame {count + 1}: {e}") from e',
           ("tests/test_bad_frames.py", T_OUT)),
    Mutant("hunttools-frame-line-argmin", "tools/frame_log.py",
           "np.unravel_index(int(np.argmax(score)), score.shape)",
           "np.unravel_index(int(np.argmin(score)), score.shape)", (T_LOG, T_OUT)),
    Mutant("hunttools-frame-line-verdict-swapped", "tools/frame_log.py",
           'verdict = "BLURRED" if results[3] else "scored"', 'verdict = "scored" if results[3] else "BLURRED"',
           (T_LOG, T_OUT)),
    Mutant("hunttools-outputs-commit-empty", "tools/outputs.py",
           "        if not self.frames:\n            self.discard()\n            return\n", "",
           (T_OUT, T_SAFE, T_PATHS)),
    Mutant("hunttools-outputs-made-dirs-kept", "tools/outputs.py",
           "        self.release()\n        remove_if_empty(self.made)", "        self.release()",
           (T_OUT, T_SAFE, T_PATHS)),
    Mutant("hunttools-outputs-jsonl-no-mode", "tools/outputs.py", '"mode": info.mode,\n', "", (T_ROWS, T_OUT)),
    Mutant("hunttools-outputs-extra-dropped", "tools/outputs.py", "**(extra or {}),", "", (T_ROWS, T_OUT, T_LIVE)),
    Mutant("hunttools-outputs-stdout-checked-as-path", "tools/outputs.py",
           "    scores_jsonl = None if scores_jsonl == STDOUT else scores_jsonl  # standard output destroys no file\n",
           "", (T_ROWS, T_PATHS, T_OUT)),
    Mutant("hunttools-outputs-stream-not-flushed", "tools/outputs.py",
           "        self.stream.write(line)\n        self.stream.flush()", "        self.stream.write(line)",
           (T_ROWS, T_OUT, T_LIVE)),
    Mutant("hunttools-make-directory-reports-existing", "tools/outputs.py",
           "while not os.path.lexists(missing) and missing != missing.parent:",
           "while missing != missing.parent:", (T_OUT, T_SAFE, T_PATHS)),
    Mutant("hunttools-schedule-change-late", "tools/requests.py", "if frame > index:", "if frame >= index:", (T_REQ,)),
    Mutant("hunttools-schedule-accepts-equal-frames", "tools/requests.py",
           "if points and frame <= points[-1][0]:", "if points and frame < points[-1][0]:", (T_REQ,)),
    Mutant("hunttools-schedule-negative-frame", "tools/requests.py",
           "return value if value >= 0 else", "return value if value >= -1 else", (T_REQ,)),
    Mutant("hunttools-auto-steps-to-poorest", "tools/requests.py",
           "chosen = self._fitting(position + 1, self.budget_ms) or self.modes[-1]",
           "chosen = self.modes[-1]", (T_REQ,)),
    Mutant("hunttools-auto-warmup-counted", "tools/requests.py", "if seen <= self.warmup:", "if seen < self.warmup:",
           (T_REQ,)),
    Mutant("hunttools-auto-mode-list-dupes", "tools/requests.py",
           "tuple(dict.fromkeys(m.strip() for m in text.split(\",\") if m.strip()))",
           "tuple(m.strip() for m in text.split(\",\") if m.strip())", (T_REQ,)),
    Mutant("hunttools-live-start-off-by-one", "video/live.py", "if number < self.start:", "if number <= self.start:",
           (T_LIVE,)),
    Mutant("hunttools-live-partial-frame-kept", "video/live.py",
           "        if got < self.frame_bytes:\n            self.partial = got\n            return None",
           "        if got == 0:\n            self.partial = got\n            return None", (T_LIVE,)),
    Mutant("hunttools-live-gray-not-converted", "video/live.py",
           "cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR) if frame.ndim == 2 else frame", "frame", (T_LIVE,)),
    Mutant("hunttools-live-size-change-allowed", "video/live.py",
           "if frame.shape[:2] != self.size:", "if frame.shape[:1] != self.size[:1]:", (T_LIVE,)),
    Mutant("hunttools-live-file-url-live", "video/live.py",
           'return not text.lower().startswith("file://")', "return True", (T_LIVE,)),
    Mutant("hunttools-live-second-iteration", "video/live.py",
           "        if self.iterated:\n            raise", "        if False:\n            raise", (T_LIVE,)),
    Mutant("hunttools-live-latency-zero-budget", "tools/live_run.py",
           "if args.max_latency is not None and not args.max_latency > 0:",
           "if args.max_latency is not None and args.max_latency < 0:", (T_LIVE,)),
    Mutant("hunttools-live-service-counts-cold", "tools/live_run.py",
           "        if self.last_written is None:  # the first frame runs cold (caches, a variant's first call): not counted\n"
           "            self.last_written = now\n            return\n", "", (T_LIVE,)),
    Mutant("hunttools-live-rows-off", "tools/live_run.py", "stats.rows = index + 1", "stats.rows = index", (T_LIVE,)),
    Mutant("hunttools-live-queue-unbounded-budget", "tools/live_run.py",
           "        if len(self.queue) >= self.capacity:\n            return False\n", "", (T_LIVE,)),
    Mutant("hunttools-manifest-hidden-folder", "tools/manifest.py",
           'bool(name) and not name.startswith(".") and', "bool(name) and", (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-manifest-unique-case", "tools/manifest.py",
           "while candidate.casefold() in taken or", "while candidate in taken or", (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-manifest-stem-keeps-suffix", "tools/manifest.py",
           'stem = head if dot and head.strip(".") else base', "stem = base", (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-manifest-unknown-status", "tools/manifest.py",
           'if entry.get("status") not in STATUSES:', "if False:", (T_BATCH, T_OUTDIR)),
]

T_SRC = "tests/test_cortex_run_outputs.py"
T_SYN = "tests/test_synthetic_video.py"
T_SMALL = "tests/test_tools_smalls.py"

MUTANTS += [  # a second batch, over the files the first did not reach
    Mutant("hunttools-seconds-first-frame-floor", "video/source.py",
           "return max(0, math.ceil(self.value * fps - 1e-6))", "return max(0, math.floor(self.value * fps - 1e-6))",
           ("tests/test_cortex_run_ux.py", T_SRC, T_SYN, T_LIVE)),
    Mutant("hunttools-source-count-ignores-start", "video/source.py",
           "count = None if self.declared is None else max(self.declared - start, 0)",
           "count = None if self.declared is None else self.declared", ("tests/test_cortex_run_ux.py", T_SRC)),
    Mutant("hunttools-source-frames-max", "video/source.py",
           "count = frames if count is None else min(count, frames)",
           "count = frames if count is None else max(count, frames)", ("tests/test_cortex_run_ux.py", T_SRC)),
    Mutant("hunttools-position-ms-as-s", "video/source.py",
           '(1000.0 if unit == "ms" else 1.0)', '(1.0 if unit == "ms" else 1000.0)',
           ("tests/test_cortex_run_ux.py", T_SRC, T_SYN, T_LIVE)),
    Mutant("hunttools-summary-rate-inverted", "tools/run_summary.py",
           "return frames / seconds if frames and seconds > 0 else None",
           "return seconds / frames if frames and seconds > 0 else None", (T_SMALL, "tests/test_cortex_run_ux.py")),
    Mutant("hunttools-summary-warnings-status", "tools/run_summary.py",
           'return "done-with-warnings" if warnings else "done"', 'return "done"', (T_BATCH, T_OUTDIR, T_SMALL)),
    Mutant("hunttools-native-preview-drops-a-line", "tools/run_native.py",
           "for line in native_of(backend)[1:]:", "for line in native_of(backend)[2:]:",
           ("tests/test_native_report.py", "tests/test_cortex_run_print_pipeline.py")),
    Mutant("hunttools-manifest-name-bytes-as-chars", "tools/manifest.py",
           'while len(stem.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:', "while len(stem) > MAX_NAME_BYTES:",
           (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-batch-names-case-sensitive", "tools/batch.py",
           "a, b = [p.casefold() for p in path.parts], [p.casefold() for p in other_path.parts]",
           "a, b = list(path.parts), list(other_path.parts)", (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-batch-video-twice-run-twice", "tools/batch.py",
           "if any(job[0] == ident for job in jobs):", "if False:", (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-batch-force-ignored", "tools/batch.py",
           'old.get("key") == key and not force:', 'old.get("key") == key:', (T_BATCH, T_OUTDIR)),
    Mutant("hunttools-batch-failed-frames-counted", "tools/batch.py",
           '"frames": n if not error else 0,', '"frames": n,', (T_BATCH, T_OUTDIR)),
]

MUTANTS += [  # a third batch: cortex-run's arguments and the frame-parallel choice
    Mutant("hunttools-blur-threshold-zero-refused", "tools/run_args.py",
           "        if not value >= 0:\n", "        if not value > 0:\n",
           ("tests/test_cortex_run_outputs.py", "tests/test_cortex_run_ux.py")),
    Mutant("hunttools-one-process-worker-runs-inline", "tools/parallel_run.py",
           'if workers == 1 and args.engine == "threads":', "if workers == 1:",
           ("tests/test_cortex_run_parallel.py", "tests/test_process_engine.py")),
]
