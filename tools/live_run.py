"""cortex-run on a live source: frames as they arrive, a latency budget, drops at arrival.

A reader thread (`FrameGate`) reads the live source (`cortex.video.live`)
and stamps each frame with its arrival time (`time.perf_counter` when its
last byte was read). It admits the frame to a bounded queue, or drops it
there and then:

- with `--max-latency MS`, a frame is dropped when the frames ahead of it
  (admitted, their rows not yet written) and itself would take longer than
  the budget: what is left of the oldest one's time, then `service` for each
  of the others and for itself, where `service` is the measured time
  one frame holds the pipeline (`LatencyModel`: the 90th percentile over the
  last 20 frames, conservative on purpose); with nothing ahead a frame
  is always admitted. A full queue drops too. Nothing waits without bound.
- without a budget no frame is dropped: when the queue is full the reader
  waits, so a pipe's writer waits too (a device or a network stream may
  then lose frames before they reach us).

The loop (`run_live`) takes frames from the queue, runs them (one after the
other, or through `run_video` on worker threads) and writes each row as
soon as its frame is done. A frame's latency is from its arrival to its
outputs written; `LatencyHistogram` keeps the distribution in constant
memory (p50/p95/p99 for the summary). Each JSONL row carries `dropped`
(frames dropped since the previous row) and `latency_ms`.

The first SIGINT or SIGTERM ends the input as the stream's end would: no
frame is read after it, every frame already read is run and written, the
outputs are closed and the summary printed; cortex-run then exits with
128 + the signal. A second signal interrupts at once (the outputs keep the
frames done, as on any interrupted run).
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cortex.errors import CortexError
from cortex.video.live import is_live

POLL_SECONDS = 0.1
"""How often the loop, waiting for a frame, looks whether a signal asked it to stop."""
QUEUE_BYTES = 256 << 20
"""The queue holds at most this many bytes of frames (and at most `QUEUE_FRAMES`, at least 2)."""
QUEUE_FRAMES = 64
RECENT = 20
SERVICE_QUANTILE = 0.9
"""The service time a new frame is judged by: the 90th percentile of the last `RECENT` frames' (a mean would
admit frames that a slower stretch then makes late; the latency's tail is what the budget bounds)."""


class LatencyHistogram:
    """Latencies in buckets 2% wide (1 µs .. 10⁴ s): percentiles within 2%, in constant memory."""

    STEP = 1.02
    LOW = 1e-6
    BUCKETS = math.ceil(math.log(1e10) / math.log(STEP)) + 1

    def __init__(self) -> None:
        self.counts = np.zeros(self.BUCKETS, np.int64)
        self.count = 0
        self.max = 0.0

    def add(self, seconds: float) -> None:
        index = 0 if seconds <= self.LOW else min(int(math.log(seconds / self.LOW) / math.log(self.STEP)) + 1,
                                                   self.BUCKETS - 1)
        self.counts[index] += 1
        self.count += 1
        self.max = max(self.max, seconds)

    def percentile(self, q: float) -> float | None:
        """Seconds that `q` % of the latencies are at or under (a bucket's upper edge, at most the maximum)."""
        if not self.count:
            return None
        rank = max(1, math.ceil(q / 100 * self.count))
        index = int(np.searchsorted(np.cumsum(self.counts), rank))
        return min(self.LOW * self.STEP ** index, self.max)


@dataclass
class Arrival:
    """A frame as the reader admitted it."""

    number: int  # the source's frame number (frames dropped count)
    frame: np.ndarray
    arrived: float  # perf_counter when it was read
    dropped_before: int  # frames dropped since the previous admitted one
    taken: float = 0.0  # when the loop took it from the queue


class LatencyModel:
    """How long one frame holds the pipeline, measured as rows are written (see `SERVICE_QUANTILE`).

    A row written at `t` served its frame since the later of the previous
    row's write and the frame's being taken from the queue: one after the
    other this is the frame's own time (pipeline and outputs); with frames
    in flight, the interval between rows. The first frame is not counted:
    it runs cold, and its time would hold for the next 20 frames.
    """

    def __init__(self) -> None:
        self.service: float | None = None
        self.last_written: float | None = None
        self.recent: deque[float] = deque(maxlen=RECENT)
        self.measured = LatencyHistogram()  # every service measured, for the summary

    def written(self, arrival: Arrival, now: float) -> None:
        if self.last_written is None:  # the first frame runs cold (caches, a variant's first call): not counted
            self.last_written = now
            return
        self.recent.append(max(now - max(self.last_written, arrival.taken), 0.0))
        self.measured.add(self.recent[-1])
        self.service = sorted(self.recent)[int(SERVICE_QUANTILE * (len(self.recent) - 1))]
        self.last_written = now

    def predicted(self, ahead: int, started: float | None = None, now: float = 0.0) -> float:
        """The latency a frame arriving `now` behind `ahead` frames would have: what is left of the oldest
        one's service (`started`: when it began, None when none has begun), then a service each.

        Infinite before any time is measured: a source's first frames often come in a burst, and admitted on
        a guess they all ran late."""
        if ahead <= 0:
            return 0.0
        if self.service is None:  # nothing measured yet: a frame behind another has no known latency
            return math.inf
        if started is None or self.last_written is None:
            return (ahead + 1) * self.service
        left = max(self.service - (now - max(started, self.last_written)), 0.0)
        return left + ahead * self.service


class FrameGate:
    """The reader thread and the bounded queue between it and the loop (see the module's docstring)."""

    def __init__(self, frames: Iterable[tuple[int, np.ndarray]], budget: float | None, capacity: int):
        self.frames = frames
        self.budget = budget
        self.capacity = max(capacity, 1)
        self.model = LatencyModel()
        self.cond = threading.Condition()
        self.queue: deque[Arrival] = deque()
        self.closed = False  # no frame is admitted any more (a signal)
        self.ended = False  # the reader has finished (the stream's end, an error, or closed)
        self.error: BaseException | None = None
        self.arrived = self.admitted = self.written = self.dropped = 0
        self.dropped_at_end = 0  # dropped after the last admitted frame (in no row's `dropped`)
        self.running: deque[float] = deque()  # when each frame taken and not yet written was taken
        self.thread = threading.Thread(target=self._read, name="cortex-live-reader", daemon=True)

    def start(self) -> FrameGate:
        self.thread.start()
        return self

    def _admits(self, now: float) -> bool:
        if self.budget is None:
            return True
        if len(self.queue) >= self.capacity:
            return False
        started = self.running[0] if self.running else None
        return self.model.predicted(self.admitted - self.written, started, now) <= self.budget

    def _read(self) -> None:
        pending = 0
        try:
            for number, frame in self.frames:
                now = time.perf_counter()
                with self.cond:
                    while self.budget is None and len(self.queue) >= self.capacity and not self.closed:
                        self.cond.wait()
                    if self.closed:
                        return
                    self.arrived += 1
                    if not self._admits(now):
                        self.dropped += 1
                        pending += 1
                        continue
                    self.queue.append(Arrival(number, frame, now, pending))
                    pending = 0
                    self.admitted += 1
                    self.cond.notify_all()
        except BaseException as e:  # noqa: BLE001 - handed to the loop, which raises it after the frames before
            with self.cond:
                self.error = e
        finally:
            with self.cond:
                self.ended = True
                self.dropped_at_end = pending
                self.cond.notify_all()

    def take(self, stopping: Callable[[], bool]) -> Arrival | None:
        """The next admitted frame, or None when there is none to come (the end, or `stopping()` and drained)."""
        with self.cond:
            while True:
                if stopping() and not self.closed:
                    self.closed = True
                    self.cond.notify_all()
                if self.queue:
                    arrival = self.queue.popleft()
                    arrival.taken = time.perf_counter()
                    self.running.append(arrival.taken)
                    self.cond.notify_all()
                    return arrival
                if self.error is not None:
                    raise self.error
                if self.ended or self.closed:
                    return None
                self.cond.wait(POLL_SECONDS)

    def ready(self, timeout: float, stopping: Callable[[], bool]) -> bool:
        """Whether `take` would return at once (a frame queued, the end, a stop), after waiting at most `timeout`."""
        with self.cond:
            if not self._has_news(stopping):
                self.cond.wait(timeout)
            return self._has_news(stopping)

    def _has_news(self, stopping: Callable[[], bool]) -> bool:
        return bool(self.queue) or self.ended or self.closed or self.error is not None or stopping()

    def done(self, arrival: Arrival, now: float) -> None:
        """`arrival`'s row is written."""
        with self.cond:
            self.written += 1
            self.running.popleft()
            self.model.written(arrival, now)
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


@dataclass
class LiveStats:
    """What a live run reports: frames read, dropped, run; latency percentiles; how it ended."""

    budget_ms: float | None
    arrived: int = 0
    rows: int = 0
    dropped: int = 0
    stopped_by: str | None = None  # the signal that ended the input, or None at the stream's end
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)
    service: LatencyHistogram = field(default_factory=LatencyHistogram)
    """The service times the admission measured (`LatencyModel`; the first, cold frame not counted)."""

    def percentiles_ms(self, histogram: LatencyHistogram | None = None) -> dict[str, float | None]:
        histogram = self.latency if histogram is None else histogram
        return {f"p{q}": None if (v := histogram.percentile(q)) is None else 1e3 * v for q in (50, 95, 99)}

    def text(self) -> str:
        p = self.percentiles_ms()
        budget = "no budget" if self.budget_ms is None else f"budget {self.budget_ms:g} ms"
        spread = ", ".join(f"{k} {'-' if v is None else f'{v:.1f}'}" for k, v in p.items())
        end = f"input stopped by {self.stopped_by}" if self.stopped_by else "the stream ended"
        return (f"live: {self.arrived} frames arrived, {self.rows} run, {self.dropped} dropped at arrival ({budget}); "
                f"{end}\n  latency (arrival -> outputs written) ms: {spread}, max {1e3 * self.latency.max:.1f}")

    def to_json(self) -> dict[str, Any]:
        return {"max_latency_ms": self.budget_ms, "arrived": self.arrived, "rows": self.rows, "dropped": self.dropped,
                "stopped_by": self.stopped_by, "latency_ms": {**self.percentiles_ms(), "max": 1e3 * self.latency.max},
                "service_ms": {**self.percentiles_ms(self.service), "max": 1e3 * self.service.max}}


class StopOnSignal:
    """While active: the first SIGINT/SIGTERM sets `signalled` (the loop stops reading); a second one
    does what the handler before did (Ctrl-C: KeyboardInterrupt). Main thread only; elsewhere inert."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signalled: signal.Signals | None = None
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signalled is None:
            self.signalled = signal.Signals(signum)
            return
        previous = self.previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)


def queue_capacity(frame_bytes: int, workers: int, budget: float | None) -> int:
    """Frames the queue holds: a few per worker without a budget (the reader waits), else what memory allows."""
    if budget is None:
        return max(2, 2 * workers)
    return max(2, min(QUEUE_FRAMES, QUEUE_BYTES // max(frame_bytes, 1)))


Runs = Callable[[Iterable[np.ndarray]], Iterator[tuple]]
"""Frames in, their results out in order: one after the other, or `run_video` on worker threads."""


def run_live(source: Any, runs: Runs, write: Callable[[int, Arrival, tuple, float], None],
             budget_ms: float | None, workers: int = 1,
             on_row: Callable[[int, Arrival, tuple], None] | None = None) -> LiveStats:
    """Run the live `source` (`LiveSource.arrivals`, then `prepare`) through `runs`; `write(index, arrival, results,
    latency_so_far)` writes a row's outputs. Returns the counts and the latencies (see the module's docstring)."""
    budget = None if budget_ms is None else budget_ms / 1e3
    h, w = source.size
    gate = FrameGate(source.arrivals(), budget, queue_capacity(h * w * 3, workers, budget))
    stats = LiveStats(budget_ms)
    taken: deque[Arrival] = deque()
    with StopOnSignal() as stop:

        def stopping() -> bool:
            return stop.signalled is not None

        class Frames:
            """The admitted frames; `ready` lets frames in flight come out while none is queued
            (`cortex.runtime.engines.flight`)."""

            def __iter__(self) -> Iterator[np.ndarray]:
                while (arrival := gate.take(stopping)) is not None:
                    arrival.frame = source.prepare(arrival.number, arrival.frame)  # converted once kept, not before
                    taken.append(arrival)
                    yield arrival.frame

            def ready(self, timeout: float) -> bool:
                return gate.ready(timeout, stopping)

        gate.start()
        results_iter = runs(Frames())
        try:
            for index, results in enumerate(results_iter):
                arrival = taken.popleft()
                write(index, arrival, results, time.perf_counter() - arrival.arrived)
                now = time.perf_counter()
                stats.latency.add(now - arrival.arrived)
                gate.done(arrival, now)
                if on_row is not None:
                    on_row(index, arrival, results)
                stats.rows = index + 1
        finally:
            close = getattr(results_iter, "close", None)
            if close is not None:
                close()
            gate.close()
        stats.stopped_by = stop.signalled.name if stop.signalled is not None else None
    with gate.cond:
        stats.arrived, stats.dropped, stats.service = gate.arrived, gate.dropped, gate.model.measured
    return stats


def one_after_another(call: Callable[[np.ndarray], tuple], timing: list[float]) -> Runs:
    """`runs` for the sequential loop: each frame through `call`; the seconds inside it added to `timing[0]`;
    an error names the frame (as `cortex_run.run_frames` does)."""

    def runs(frames: Iterable[np.ndarray]) -> Iterator[tuple]:
        for count, frame in enumerate(frames):
            start = time.perf_counter()
            try:
                results = call(frame)
            except CortexError as e:
                if str(e).startswith(f"frame {count}:"):
                    raise
                raise CortexError(f"frame {count}: {e}") from e
            timing[0] += time.perf_counter() - start
            yield results

    return runs


def live_frame_loop(args: Any, prep: Any, backend: Any, runner: Any, outputs: Any,
                    line: Callable[[int, tuple, bool], str], header: Callable[[bool], str]) -> tuple[int, float, int, LiveStats]:
    """cortex-run's frame loop on a live source: (rows, seconds in the pipeline, frames the blur gate skipped, stats).

    `runner`: cortex-run's `ParallelRunner` (worker threads through `run_video`) or None (one frame after the other).
    """
    from cortex.tools.report import progress_bar

    source, probed = prep.source, prep.probed
    h, w = source.size
    log = not args.no_frame_log
    bar = progress_bar(None, False if args.quiet else (True if args.progress else None))
    timing = [0.0]
    skipped = [0]
    if runner is None:
        runs = one_after_another(backend, timing)
    else:
        def runs(frames: Iterable[np.ndarray]) -> Iterator[tuple]:
            return runner.compiled.run_video(frames, workers=runner.workers, engine="threads", profile=True)

    def write(index: int, arrival: Arrival, results: tuple, latency: float) -> None:
        outputs.write(index, arrival.frame, results, probed, number=arrival.number,
                      extra={"dropped": arrival.dropped_before, "latency_ms": round(1e3 * latency, 3)})

    def on_row(index: int, arrival: Arrival, results: tuple) -> None:
        if probed and results[3]:
            skipped[0] += 1
        if log:
            bar.write(line(index, results, probed), file=sys.stdout)
        bar.update(1)

    if log:
        bar.write(header(probed), file=sys.stdout)
    budget = "no latency budget" if args.max_latency is None else f"at most {args.max_latency:g} ms a frame"
    print(f"live: reading {source.name} ({h}x{w}) from now on, {budget}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        stats = run_live(source, runs, write, args.max_latency, runner.workers if runner else 1, on_row)
    finally:
        bar.close()
    seconds = timing[0]
    if runner is not None:
        runner.wall_seconds = seconds = time.perf_counter() - start
    return stats.rows, seconds, skipped[0], stats


def check_live_run(args: Any, names: list[str | None]) -> None:
    """A live source among the run's videos runs alone, on --engine threads (before Ray or any work starts)."""
    live = [name for name in names if is_live(name)]
    if not live:
        return
    if len(names) > 1 or getattr(args, "out_dir", None):
        raise CortexError(f"a live source ({live[0]}) runs alone: not with more videos or --out-dir")
    if args.engine != "threads":
        raise CortexError(f"--engine {args.engine} runs frames in chunks read ahead: a live source runs on "
                          "--engine threads (the default)")


def check_live_arguments(args: Any, live: bool) -> None:
    """The flags that go with a live source, and the engines that run one (before any work)."""
    if not live:
        for flag in ("pix_fmt", "fps", "max_latency"):
            if getattr(args, flag, None) is not None:
                raise CortexError(f"--{flag.replace('_', '-')} goes with a live source ('-', a URL or a device), "
                                  f"not {args.video or 'the synthetic video'}")
        return
    if args.pix_fmt is not None and args.video != "-":
        raise CortexError(f"--pix-fmt goes with raw frames on standard input ('-'); {args.video} says its own")
    if args.max_latency is not None and not args.max_latency > 0:
        raise CortexError(f"--max-latency must be > 0 ms, got {args.max_latency:g}")


__all__ = ["Arrival", "FrameGate", "LatencyHistogram", "LatencyModel", "LiveStats", "StopOnSignal", "check_live_arguments",
           "check_live_run", "live_frame_loop", "one_after_another", "queue_capacity", "run_live"]
