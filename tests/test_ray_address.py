"""A bad Ray address fails in one line, quickly.

A malformed `address` was an internal error from inside `ray.init`, and an unreachable one hung
for minutes. `start_ray` now reads the address first (host:port, ray://host[:port], auto, local),
tries a TCP connection with a short timeout before `ray.init`, and turns what `ray.init` raises
into one CortexError. None of these tests starts Ray.
"""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("ray")

from helpers.pipelines import SMALL, small_l2_text  # noqa: E402
from helpers.scheduling import compiled, frames_of  # noqa: E402

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime.engines.ray import start_ray  # noqa: E402


@pytest.fixture
def no_ray_init(monkeypatch):
    """`ray.init` fails the test if called: a bad address must be refused before it (ray.init retries
    for minutes). This, not a wall-clock bound, is what "fails at once" means here."""
    import ray

    calls: list[tuple] = []

    def init(*args, **kwargs):
        calls.append(args)
        raise AssertionError("ray.init was called for an address the probe should have refused")

    monkeypatch.setattr(ray, "init", init)
    yield calls
    assert not calls, "ray.init was called: the address was not refused before it"


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


GARBAGE = ["", "   ", "garbage", "not an address at all", "host:", ":6379", "host:port", "host:70000", "host:-1",
           "http://host:80", "ray://", "ray://:10001", "a b:12", "host:12:34", "[::1", "\x00:1", "x" * 5000 + ":1"]


@pytest.mark.parametrize("address", GARBAGE, ids=lambda a: repr(a[:20]))
def test_an_unreadable_address_is_one_line(address):
    with pytest.raises(CortexError) as info:
        start_ray(address)
    text = str(info.value)
    assert text.startswith("Ray address ") and "\n" not in text and len(text) < 400


@pytest.mark.parametrize("address", [5, 6379.0, b"localhost:6379", ["localhost:6379"]], ids=repr)
def test_an_address_that_is_not_text_is_one_line(address):
    with pytest.raises(CortexError, match="^Ray address must be text"):
        start_ray(address)


@pytest.mark.parametrize(
    ("text", "host", "port", "client"),
    [("localhost:6379", "localhost", 6379, False), ("10.0.0.2:1", "10.0.0.2", 1, False),
     ("ray://head:10001", "head", 10001, True), ("ray://head", "head", 10001, True),
     ("[::1]:6379", "::1", 6379, False), ("ray://[fe80::1]:5", "fe80::1", 5, True)],
)
def test_addresses_ray_accepts_are_read(text, host, port, client):
    from cortex.runtime.engines.ray import RayAddress

    address = RayAddress.parse(text)
    assert (address.host, address.port, address.client) == (host, port, client)


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_unreachable_port_fails_at_once_in_one_line(scheme, no_ray_init):
    port = unused_port()
    with pytest.raises(CortexError) as info:
        start_ray(f"{scheme}127.0.0.1:{port}")
    text = str(info.value)
    assert text.startswith(f"cannot reach the Ray cluster at 127.0.0.1:{port}") and "\n" not in text


def test_a_host_that_never_answers_fails_within_the_timeout(monkeypatch, no_ray_init):
    """A listener that accepts nothing in time (a full backlog stands in for a black-holed host)."""
    import cortex.runtime.engines.ray as rx

    monkeypatch.setattr(rx, "CONNECT_TIMEOUT", 0.5)
    calls = []

    def never(address, timeout):
        calls.append(timeout)
        raise TimeoutError("timed out")

    monkeypatch.setattr(rx.socket, "create_connection", never)
    with pytest.raises(CortexError, match=r"^cannot reach the Ray cluster at 10\.255\.255\.1:6379 \(no answer within 0\.5 s\)"):
        start_ray("10.255.255.1:6379")
    assert calls == [0.5]


@pytest.fixture
def listener():
    """A local TCP server that accepts and then either says nothing or answers `reply` (not Ray)."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    state = {"reply": None, "stop": False, "held": []}

    def serve():
        server.settimeout(0.1)
        while not state["stop"]:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            state["held"].append(conn)
            if state["reply"] is not None:
                conn.sendall(state["reply"])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], state
    state["stop"] = True
    thread.join()
    for conn in state["held"]:
        conn.close()
    server.close()


def test_a_listener_that_never_answers_fails_within_the_timeout(listener, monkeypatch, no_ray_init):
    """ray.init on a port where something accepts but is not Ray retried for minutes, printing as it went."""
    import cortex.runtime.engines.ray as rx

    monkeypatch.setattr(rx, "CONNECT_TIMEOUT", 0.5)
    port, _ = listener
    with pytest.raises(CortexError, match=rf"^cannot reach the Ray cluster at 127\.0\.0\.1:{port} \(no answer within 0\.5 s\)$"):
        start_ray(f"127.0.0.1:{port}")


def test_a_listener_that_is_not_ray_is_one_line(listener):
    port, state = listener
    state["reply"] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
    with pytest.raises(CortexError, match=rf"^cannot reach the Ray cluster at 127\.0\.0\.1:{port}: what listens there does not answer as Ray"):
        start_ray(f"ray://127.0.0.1:{port}")


def test_run_video_with_a_bad_address_is_one_line_and_starts_nothing():
    import ray

    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match="^Ray address "):
        list(b.run_video(frames_of(SMALL, 2), workers=1, engine="ray", address="garbage"))
    with pytest.raises(CortexError, match="^cannot reach the Ray cluster"):
        list(b.run_video(frames_of(SMALL, 2), workers=1, engine="ray", address=f"127.0.0.1:{unused_port()}"))
    assert not ray.is_initialized()


@pytest.mark.parametrize("address", ["garbage", None])
def test_cortex_run_with_a_bad_ray_address_is_one_line(capsys, address, no_ray_init):
    from cortex.tools.cortex_run import main

    address = address or f"127.0.0.1:{unused_port()}"
    rc = main(["--size", "96x128", "--frames", "2", "--engine", "ray", "--ray-address", address, "--quiet",
               "--no-frame-log", "--dce-frames", "0"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


class _NoRayYet:
    """Stands in for the `ray` module before Ray starts: `ray.init` must not be reached."""

    def is_initialized(self):
        return False

    def init(self, **options):
        raise AssertionError(f"ray.init reached with {options}")


@pytest.mark.parametrize("value", ["garbage", "127.0.0.1:{port}"])
def test_a_bad_ray_address_in_the_environment_is_one_line_too(monkeypatch, value):
    """`ray.init()` with no address joins `RAY_ADDRESS` from the environment: it is read and tried like a
    given address (it bypassed the check: a stale RAY_ADDRESS hung `cortex-run --engine ray` for minutes)."""
    import cortex.runtime.engines.ray as rx

    monkeypatch.setattr(rx, "_ray", _NoRayYet)
    monkeypatch.setenv("RAY_ADDRESS", value.format(port=unused_port()))
    with pytest.raises(CortexError, match="^RAY_ADDRESS in the environment: ") as info:
        start_ray()
    assert "\n" not in str(info.value)
