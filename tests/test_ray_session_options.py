"""`run_video(engine="ray", session=...)`: a bad session, or options the session already fixed, are one
line before any Ray starts (`ray.init` is replaced by one that fails the test)."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from helpers.pipelines import SMALL, small_l2_text  # noqa: E402
from helpers.scheduling import compiled, frames_of  # noqa: E402

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime.engines.ray import RaySession  # noqa: E402


@pytest.fixture(scope="module")
def pipeline():
    return compiled(small_l2_text())


@pytest.fixture(autouse=True)
def no_ray_init(monkeypatch):
    def init(*args, **kwargs):
        raise AssertionError("ray.init was called")

    monkeypatch.setattr(ray, "init", init)


@pytest.mark.parametrize("session", ["ray://head", 3, object()], ids=["text", "int", "object"])
def test_a_session_that_is_not_one_is_refused(pipeline, session):
    with pytest.raises(CortexError, match=rf"^session must be a RaySession, got {type(session).__name__}$"):
        pipeline.run_video(frames_of(SMALL, 2), workers=1, engine="ray", session=session)


@pytest.mark.parametrize("option", [{"address": "auto"}, {"num_cpus": 2}], ids=lambda o: next(iter(o)))
def test_address_and_cpus_belong_to_the_session(pipeline, option):
    session = RaySession.__new__(RaySession)  # never opened: the check comes first
    with pytest.raises(CortexError, match=r"^with a session, give address and num_cpus to RaySession, not to run_video$"):
        pipeline.run_video(frames_of(SMALL, 2), workers=1, engine="ray", session=session, **option)


def test_a_bad_address_fails_the_session_in_one_line():
    with pytest.raises(CortexError, match=r"^Ray address 'nowhere' is not host:port"):
        RaySession(address="nowhere")
