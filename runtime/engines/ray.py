"""Ray actors as executors of the frames-in-flight loop: frame chunks on actors, the recurrence on the caller.

    for encoded, score in compiled.run_video(frames, workers=4, engine="ray"):            # a local Ray
    for out in compiled.run_video(frames, workers=16, engine="ray", address="ray://head:10001"):

Each actor (`FrameWorker`, one CPU) is sent the compiled `Program` (plain
data) and loads its frame split; it never compiles anything, and the
compiler need not even be importable where it runs. An item of the loop
(`cortex.runtime.engines.flight`) is a chunk of frames:

- `front(chunk)` on an actor: the delayed and parallel parts of every frame
  of the chunk. A chunk starts from the frame before it (the previous
  chunk's last frame), whose delayed part gives the first frame's delayed
  inputs exactly; the very first chunk gets the caller's state instead.
  When the entry has leading recurrences (the blur gate's sharpness
  history), each chunk's starting values come from `ahead(previous chunk)`
  on an actor: the delayed part alone, chained chunk after chunk (the caller
  used to run it for every frame as it read them);
- the recurrence over the chunk, on the caller, in frame order;
- `tail(chunk, values)` on the same actor: the tail part (the encoder).

`compiled.state` is brought up to date at the end of each chunk (so the
final state equals the sequential run's). The first failure stops the run
(`CortexError` naming the frame). Ray is an optional extra (`pip install cortex[ray]`).

Start-up: a run without a session joins (or starts) Ray, starts its actors,
and at the end kills them and shuts down a Ray it started: seconds per call.
A `RaySession` does that once and keeps both across runs:

    with RaySession(address="ray://head:10001") as session:
        for video in videos:
            outputs = compiled.run_video(frames_of(video), workers=16, engine="ray", session=session)

Several nodes: an actor whose node is lost is restarted elsewhere and its
unfinished tasks are retried (up to `NODE_LOSSES` restarts): a chunk's parts are
functions of their arguments (the chunk, its start values), so a retried
task gives the same values, and the caller delivers each chunk once, in
order. Every result comes back to the caller: nothing is written on the nodes.
"""

from __future__ import annotations

import atexit
import ipaddress
import itertools
import os
import re
import socket
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cortex.errors import CortexError, whole_number
from cortex.runtime.engines.base import EngineRun, unknown_options
from cortex.runtime.engines.chunk_worker import FrameWorker, chunks_of, limit_library_threads, settle_chunk
from cortex.runtime.engines.flight import frames_in_flight
from cortex.runtime.parts import LoadedSplit
from cortex.runtime.program import Program
from cortex.runtime.threads import MAX_WORKERS, machine_cores


def _ray() -> Any:
    try:
        import ray
    except ImportError:  # pragma: no cover - ray is in the test extra
        raise CortexError("engine 'ray' needs Ray: pip install 'cortex[ray]'") from None
    return ray


CHAIN = "chain"
"""The actor's concurrency group of `FrameWorker.ahead` (one thread): the leading-recurrence chain runs
beside the chunk in progress (`front`, `tail`: the default group, one at a time, in order)."""


NODE_LOSSES = 2
"""How many times an actor is restarted when its process or node dies. Its tasks are retried for as long as
it may come back (Ray's `max_task_retries=-1`, bounded by the restarts): until Ray declares a killed node
dead, every retry meets a refused connection within milliseconds, so a count of retries runs out before
the restart happens on a loaded machine. A chunk's parts are functions of their arguments alone, so a
retried task gives the same bytes."""


def _actor_class(ray: Any) -> Any:
    return ray.remote(num_cpus=1, concurrency_groups={CHAIN: 1}, max_restarts=NODE_LOSSES,
                      max_task_retries=-1)(FrameWorker)


CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a TCP connection to a Ray address before `ray.init` (which can wait minutes)."""

CLIENT_PORT = 10001
"""The port of `ray://host` without one (Ray Client's default)."""

_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,253})")


@dataclass(frozen=True)
class RayAddress:
    """A Ray address read before `ray.init`: `host:port` (the cluster's GCS), `ray://host[:port]` (Ray Client),
    or one of Ray's words `auto` (the running local cluster) and `local` (start one); host may be `[IPv6]`."""

    text: str
    host: str | None = None
    port: int | None = None
    client: bool = False

    @classmethod
    def parse(cls, text: object) -> RayAddress:
        if not isinstance(text, str):
            raise CortexError(f"Ray address must be text (host:port, ray://host:port, auto or local), got {type(text).__name__}")
        shown = repr(text[:60] + ("..." if len(text) > 60 else ""))
        expected = f"Ray address {shown} is not host:port, ray://host[:port], auto or local"
        if text in ("auto", "local"):
            return cls(text)
        client = text.startswith("ray://")
        rest = text.removeprefix("ray://")
        if len(rest) > 300 or "://" in rest:
            raise CortexError(expected)
        if rest.startswith("["):  # [IPv6]:port
            host, bracket, port_text = rest[1:].partition("]")
            if not bracket or (port_text and not port_text.startswith(":")):
                raise CortexError(expected)
            port_text = port_text[1:]
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                raise CortexError(expected) from None
        else:
            host, colon, port_text = rest.partition(":")
            if not colon and not client:
                raise CortexError(expected)
            if not _HOST.fullmatch(host):
                raise CortexError(expected)
        if not port_text and client:
            return cls(text, host, CLIENT_PORT, client)
        if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise CortexError(f"{expected} (the port must be a number from 1 to 65535)")
        return cls(text, host, int(port_text), client)

    def probe(self, timeout: float) -> None:
        """A CortexError unless host:port accepts a TCP connection and answers as a gRPC server (Ray's
        GCS and Ray Client both are) within `timeout` seconds; `ray.init` on anything else waits minutes.

        The check is HTTP/2's own opening: the client preface and an empty SETTINGS frame, to which
        a gRPC server answers with its SETTINGS frame. Skipped under TLS (`RAY_USE_TLS`)."""
        if self.host is None or self.port is None:
            return
        where = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        deadline = time.monotonic() + timeout
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout) as conn:
                if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                    return
                conn.sendall(HTTP2_PREFACE + EMPTY_SETTINGS)
                answer = b""
                while len(answer) < 9:
                    conn.settimeout(max(deadline - time.monotonic(), 0.001))
                    more = conn.recv(9 - len(answer))
                    if not more:
                        break
                    answer += more
        except TimeoutError:
            raise CortexError(f"cannot reach the Ray cluster at {where} (no answer within {timeout:g} s)") from None
        except OSError as e:
            raise CortexError(f"cannot reach the Ray cluster at {where}: {e.strerror or e}") from None
        if len(answer) < 9 or answer[3] != SETTINGS_FRAME:
            raise CortexError(f"cannot reach the Ray cluster at {where}: what listens there does not answer as Ray (gRPC)")


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # length 0, type SETTINGS, no flags, stream 0
SETTINGS_FRAME = 4


def start_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join `address` or start a local Ray (unless this process is connected already); True when this call started it.

    No address (and no `RAY_ADDRESS`) starts a new local instance: a cluster started with `ray start` on this
    machine is joined only when asked for (`address="auto"`).

    An address — given, or `RAY_ADDRESS` in the environment, which `ray.init()` joins
    when given none — is read and tried (a TCP connection, `CONNECT_TIMEOUT`) first, so
    a malformed or unreachable one is one line at once instead of `ray.init`'s
    traceback or minutes of retries; whatever `ray.init` still raises is one line too.
    """
    ray = _ray()
    if address is not None:
        RayAddress.parse(address).probe(CONNECT_TIMEOUT)
    if num_cpus is not None:
        whole_number("num_cpus", num_cpus, 1, MAX_WORKERS)
    if ray.is_initialized():
        return False
    from_environment = (os.environ.get("RAY_ADDRESS") or None) if address is None else None
    if from_environment is not None:  # what `ray.init()` joins when given no address
        try:
            RayAddress.parse(from_environment).probe(CONNECT_TIMEOUT)
        except CortexError as e:
            raise CortexError(f"RAY_ADDRESS in the environment: {e}") from None
    joined = address if address is not None else from_environment
    try:
        # "local", not None: given no address, `ray.init` joins the cluster /tmp/ray/ray_current_cluster names,
        # which a cluster that has since gone leaves behind (then it waits for a dead head)
        ray.init(address=joined or "local", num_cpus=num_cpus if joined is None else None, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    except Exception as e:
        if ray.is_initialized():
            ray.shutdown()
        where = f" at {joined}" if joined is not None else ""
        raise CortexError(f"cannot start Ray{where}: {type(e).__name__}: {' '.join(str(e).split())[:300]}") from None
    return True


RayFront = tuple[int, list[Any], Any, Any, tuple[str, ...] | None, Any]
"""A chunk in flight on Ray: (its first frame's index, its frames, their object ref, the actor, its frames' modes
or None, the front's ref)."""
RayTail = tuple[int, list[Any], dict[str, Any], tuple[str, ...] | None, Any]
"""A settled chunk: (its first frame's index, its frames, the state after it, its frames' modes, the tail's ref)."""


class RayFrames:
    """The executor of `frames_in_flight` on Ray actors: one item is a chunk of frames.

    With `EngineRun.variants` the actors hold every variant (`FrameWorker`) and each frame runs its own
    mode's: a chunk names its frames' modes, and every chunk but the first starts from the frame before it
    (its mode named too), from which its front computes the delayed inputs by that frame's variant (the
    chain, `ahead`, then carries the leading recurrences alone)."""

    def __init__(self, ray: Any, run: EngineRun, actors: list[Any]):
        self.ray, self.run, self.split, self.actors = ray, run, run.split, actors
        self.variants = run.variants
        splits = list(self.variants.splits.values()) if self.variants is not None else [run.split]
        start = run.start_state()
        self.state: dict[str, Any] = {}
        for split in splits:
            self.state.update(split.internal_state(start))
        self.fixed = {n: self.state[n] for split in splits for n in split.read_only}
        self.leading = any(split.leading for split in splits)
        # delayed inputs and leading recurrences before the next chunk: values, then an object ref (`ahead`)
        self.ahead: Any = {n: self.state.get(n) for split in splits for n in split.ahead}
        self.first, self.before, self.turn = 0, None, itertools.count()
        self.before_mode: str | None = None

    def start(self, frames_chunk: list[Any]) -> RayFront:
        first = self.first
        # (each frame was checked as it was read: `LoadedProgram.run_video`'s NumberedFrames)
        actor = self.actors[next(self.turn) % len(self.actors)]
        ref = self.ray.put(frames_chunk)
        modes, before_mode = self._modes(len(frames_chunk))
        # With leading recurrences (the blur gate's sharpness history) a chunk starts from their exact
        # value after the previous chunk: `ahead` runs the delayed part over each chunk on an actor,
        # chained chunk after chunk (its result, an object ref, is the next chunk's start), so the
        # caller runs no delayed part and a chunk's front waits only for that short chain. Without
        # them a chunk starts from the frame before it, and chunks never wait for each other.
        delayed = self.ahead if first == 0 or self.leading else None
        before = self.before if delayed is None or (modes is not None and first > 0) else None
        future = actor.front.remote(ref, first, before, delayed, self.fixed, True, None, modes, before_mode)
        if self.leading:
            self.ahead = actor.ahead.options(concurrency_group=CHAIN).remote(ref, first, delayed, self.fixed, modes)
        self.first += len(frames_chunk)
        self.before = frames_chunk[-1]
        return first, frames_chunk, ref, actor, modes, future

    def _modes(self, count: int) -> tuple[tuple[str, ...] | None, str | None]:
        """The next `count` frames' modes (asked in frame order) and the mode of the frame before them."""
        if self.variants is None:
            return None, None
        modes = tuple(self.variants.mode_of(self.first + k) for k in range(count))
        before_mode, self.before_mode = self.before_mode, modes[-1]
        return modes, before_mode

    def _splits(self, modes: tuple[str, ...] | None, count: int) -> list[LoadedSplit]:
        return [self.variants.splits[m] for m in modes] if self.variants is not None and modes else [self.split] * count

    def settle(self, flight: RayFront) -> RayTail:
        at, frames_chunk, ref, actor, modes, future = flight
        state = self.state
        values = self._get(future, at, len(frames_chunk))
        tail_args = settle_chunk(self.split, state, values, at, self._splits(modes, len(frames_chunk)))
        return at, frames_chunk, dict(state), modes, actor.tail.remote(ref, at, tail_args, modes)

    def done(self, flight: RayFront | RayTail) -> bool:
        ready, _ = self.ray.wait([flight[-1]], timeout=0)
        return bool(ready)

    def wait(self, flights: list[RayFront | RayTail]) -> None:
        self.ray.wait([f[-1] for f in flights], num_returns=1)

    def finish(self, flight: RayTail) -> Iterator[tuple[Any, ...]]:
        at, frames_chunk, state_after, modes, future = flight
        splits = self._splits(modes, len(frames_chunk))
        outputs = [s.caller_outputs(out) for s, out in zip(splits, self._get(future, at, len(frames_chunk)))]
        for k, (frame, result) in enumerate(zip(frames_chunk, outputs)):
            if k == len(outputs) - 1:
                self.run.hand_back(splits[k].caller_state(state_after, result, (frame,)))
            yield result

    def _get(self, future: Any, first: int, count: int) -> Any:
        """`_get`; an error that names no frame (an actor died) names the chunk's frames."""
        try:
            return _get(self.ray, future)
        except CortexError as e:
            text = str(e)
            if text.startswith("frame ") or isinstance(e, WorkerStartError):
                raise
            frames = f"frame {first}" if count == 1 else f"frames {first} to {first + count - 1}"
            raise CortexError(f"{frames}: {text}") from None

    def close(self, flights: Iterable[RayFront | RayTail]) -> None:
        pass  # the actors are killed by run_ray, whatever is still running on them goes with them


RAY_OPTIONS = ("address", "chunk", "num_cpus", "session", "worker_setup")


def check_ray_options(options: dict[str, Any]) -> None:
    """A CortexError for an option `run_video(engine="ray")` does not take or a bad value (before Ray starts)."""
    unknown_options("ray", options, RAY_OPTIONS)
    check_chunk(options.get("chunk", 8))
    if options.get("num_cpus") is not None:
        whole_number("num_cpus", options["num_cpus"], 1, MAX_WORKERS)
    if options.get("address") is not None:
        RayAddress.parse(options["address"])
    session = options.get("session")
    if session is not None:
        if not isinstance(session, RaySession):
            raise CortexError(f"session must be a RaySession, got {type(session).__name__}")
        if options.get("address") is not None or options.get("num_cpus") is not None:
            raise CortexError("with a session, give address and num_cpus to RaySession, not to run_video")
    setup = options.get("worker_setup")
    if setup is not None and not callable(setup):
        raise CortexError(f"worker_setup must be a function, got {type(setup).__name__}")


def check_chunk(chunk: int) -> None:
    whole_number("chunk", chunk, 1, MAX_CHUNK)


MAX_CHUNK = 4096
"""The most frames in one chunk (one item of the loop on Ray: sent to an actor at once)."""


class RaySession:
    """A Ray connection and one group of actors, kept across `run_video(..., engine="ray", session=s)` calls.

    Without a session each run joins (or starts) Ray, starts its actors and ends both: seconds per call.
    A session connects once, now, and keeps the actors of its last run that ended cleanly; the next run
    with the same program, worker count and `worker_setup` reuses them (any other run replaces them: a
    group holds one CPU an actor, so a session keeps one group only). A run that ends early (an error,
    the caller closing the generator) kills its actors, since work may still run on them. One run at a
    time. `close()` kills them and shuts down a Ray the session started; so does leaving
    `with RaySession() as s:`, and exit.
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        self.ray = _ray()
        self.address = address
        self.started = start_ray(address, num_cpus)
        self.key: tuple[Any, ...] | None = None
        self.actors: list = []
        self.program_ref: Any = None
        self.closed = self.running = False
        _SESSIONS.add(self)

    def actors_for(self, program: Program, workers: int, setup: Callable[[], None] | None) -> list:
        """The session's actors for this run: the kept ones when the program, count and setup are the same."""
        if self.closed:
            raise CortexError("this RaySession is closed")
        if not self.ray.is_initialized():
            raise CortexError("Ray was shut down under this RaySession (start a new one)")
        key = (program, workers, setup)
        if self.actors and self.key is not None and all(a is b for a, b in zip(self.key, key)):
            return self.actors
        self.drop()
        cores = int(self.ray.cluster_resources().get("CPU", machine_cores()))
        if self.address is None and workers > cores:  # the missing actors would wait for CPUs forever
            raise CortexError(
                f"workers={workers} needs {workers} CPUs on Ray (one actor each), the local Ray has {cores}"
                + ("" if not self.started else f" (give workers <= {cores}, or num_cpus={workers})")
            )
        worker_class = _actor_class(self.ray)
        threads = max(1, cores // workers)
        # held while the actors live: an actor restarted on another node loads the program again
        self.program_ref = self.ray.put(program)
        self.actors = [worker_class.remote(self.program_ref, threads, setup) for _ in range(workers)]
        self.key = key
        return self.actors

    def drop(self) -> None:
        """Kill the kept actors (a later run starts new ones)."""
        actors, self.actors, self.key, self.program_ref = self.actors, [], None, None
        if actors and self.ray.is_initialized():
            for actor in actors:
                self.ray.kill(actor)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.drop()
        _SESSIONS.discard(self)
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SESSIONS: weakref.WeakSet[RaySession] = weakref.WeakSet()


def close_ray_sessions() -> None:
    """Close every open `RaySession` (also at exit)."""
    for session in list(_SESSIONS):
        session.close()


atexit.register(close_ray_sessions)


def run_ray(run: EngineRun, address: str | None = None, chunk: int = 8, num_cpus: int | None = None,
            worker_setup: Callable[[], None] | None = None,
            session: RaySession | None = None) -> Iterator[tuple[Any, ...]]:
    """`compiled.run_video(..., engine="ray")`: see the module docstring. `worker_setup`: run first in each actor;
    `session`: the Ray connection and actors to use and keep (`RaySession`), else this run's own."""
    own = session is None
    if session is None:
        session = RaySession(address, num_cpus)
    elif session.running:
        raise CortexError("this RaySession is running another run_video (a session runs one at a time)")
    clean, session.running = False, True
    try:
        actors = session.actors_for(run.program, run.workers, worker_setup)
        yield from frames_in_flight(chunks_of(run.frames, chunk), run.window, RayFrames(session.ray, run, actors))
        clean = True
    finally:
        session.running = False
        if own:
            session.close()
        elif not clean:
            session.drop()


class RayEngine:
    """`run_video(engine="ray")`: options address, chunk, num_cpus, session, worker_setup."""

    name = "ray"
    options = RAY_OPTIONS
    profiles = False
    variants = True

    def check(self, options: dict[str, Any]) -> None:
        check_ray_options(options)

    def run(self, run: EngineRun, **options: Any) -> Iterator[tuple[Any, ...]]:
        return run_ray(run, **options)


ENGINE = RayEngine()


class WorkerStartError(CortexError):
    """An actor failed before running any frame (its setup, loading the program)."""


def _get(ray: Any, ref: Any) -> Any:
    """`ray.get`, with a worker's CortexError raised again here as itself (one line)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, CortexError):
            raise CortexError(str(cause)) from None
        raise CortexError(f"a Ray worker failed: {' '.join(str(cause or e).split())[:300]}") from None
    except ray.exceptions.RayActorError as e:
        text = str(e)
        if getattr(e, "actor_init_failed", False):  # the error is the traceback's last line: "module.Error: message"
            last = text.strip().splitlines()[-1] if text.strip() else text
            name, _, message = last.partition(": ")
            said = message if name.rpartition(".")[2] == "CortexError" else last
            raise WorkerStartError(f"a Ray worker could not start: {' '.join(said.split())[:300]}") from None
        raise CortexError(f"a Ray worker died: {' '.join(text.split())[:300]}") from None
    except ray.exceptions.RayError as e:  # a result lost with its node, past the retries (ObjectLostError ...)
        raise CortexError(f"Ray lost a result: {type(e).__name__}: {' '.join(str(e).split())[:300]}") from None


__all__ = [
    "CHAIN", "ENGINE", "NODE_LOSSES", "RayEngine", "FrameWorker", "RayAddress", "RayFrames", "RaySession", "check_chunk", "check_ray_options",
    "close_ray_sessions", "limit_library_threads", "run_ray", "start_ray",
]
