"""`start_ray()` with no address starts a local Ray; it never joins what /tmp/ray/ray_current_cluster names.

`ray.init()` given no address joins the cluster named in that file, which a cluster that has gone (a test's
`ray.cluster_utils.Cluster`, a `ray start` since stopped) leaves behind: then it waits for a dead head.
No Ray starts here: `ray.init` is replaced by one that records its arguments.
"""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime.engines.ray import start_ray  # noqa: E402


class Stop(Exception):
    pass


@pytest.fixture
def init_calls(monkeypatch, tmp_path):
    """`ray.init` records its keyword arguments and stops; a stale cluster file names a dead head."""
    calls: list[dict] = []

    def init(*args, **kwargs):
        calls.append(kwargs)
        raise Stop("recorded")

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:1")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    return calls


def test_no_address_starts_a_local_ray(init_calls):
    with pytest.raises(CortexError, match=r"^cannot start Ray: Stop: recorded$"):
        start_ray(num_cpus=1)
    assert [c["address"] for c in init_calls] == ["local"]
    assert init_calls[0]["num_cpus"] == 1


def test_ray_address_in_the_environment_is_still_joined(init_calls, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    with pytest.raises(CortexError, match=r"^cannot start Ray at auto: Stop: recorded$"):
        start_ray(num_cpus=1)
    assert [(c["address"], c["num_cpus"]) for c in init_calls] == [("auto", None)]  # joined: no CPUs of its own
