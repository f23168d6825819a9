"""Which checkout is under test: the one this `tests/` folder belongs to, or the run stops at once.

The repository root is the package `cortex` (pyproject: package-dir), so `import cortex` goes
through whatever put it on the path — an editable install of another clone, a PYTHONPATH link —
and a run could silently test another tree. Links are fine (paths are compared resolved).
Putting this file in `tests/` also puts `tests/` on `sys.path`, so test modules import the
shared builders as `helpers.*` under plain `pytest` and `python -m pytest` alike.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

import cortex

TREE = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir))
IMPORTED = os.path.realpath(os.path.dirname(cortex.__file__))


def pytest_configure(config: pytest.Config) -> None:
    if IMPORTED != TREE:
        pytest.exit(f"`import cortex` resolves to {IMPORTED}, not the tree under test {TREE}", returncode=4)


# Hypothesis: no test depends on the clock or on the last run. No deadline (a shared, loaded machine
# makes any per-example time limit flaky; pytest-timeout still bounds each test), a fixed example
# sequence (derandomize: a run's outcome is a function of the code alone) and no example database
# (nothing replayed from an earlier run). Built on whatever profile is active (scripts/mutate.py's
# plugin loads one before this file), so its settings are kept. HYPOTHESIS_PROFILE=explore draws
# fresh random examples each run instead (e.g. a nightly job looking for new failures).
settings.register_profile("cortex", settings.default, deadline=None, derandomize=True, database=None)
settings.register_profile("explore", settings.default, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cortex"))


# One local Ray for the tests that ask for it (`local_ray`): starting Ray is seconds, and several files run
# a few frames on it. Started on first use and kept while the next test asks for it too; any other test
# finds no Ray of ours running (one that starts or joins its own, or checks that nothing was started, sees
# the process as it would alone). Under xdist, every such test is in xdist_group("ray"): one worker runs
# them one after another, so the cluster starts once there.
_shared_ray: dict[str, object] = {}


def stop_shared_ray() -> None:
    ray = _shared_ray.pop("ray", None)
    if ray is not None and ray.is_initialized():  # type: ignore[attr-defined]
        ray.shutdown()  # type: ignore[attr-defined]


@pytest.fixture
def local_ray():
    """A local Ray with 2 CPUs, shared with the next tests that ask for it; the `ray` module."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        _shared_ray["ray"] = ray
    return ray


@pytest.fixture(autouse=True)
def _shared_ray_only_where_asked(request: pytest.FixtureRequest):
    if _shared_ray and "local_ray" not in request.fixturenames:
        stop_shared_ray()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stop_shared_ray()  # never leave a cluster running
