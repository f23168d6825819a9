"""Plain `xdsl-opt` (xDSL's own driver) learns cortex through the `xdsl.universe` entry point."""

from __future__ import annotations

import shutil
import subprocess
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from cortex.registry import PASS_LOCATIONS, cortex_passes

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "l2_pipeline.mlir"


def test_entry_point_is_installed():
    names = {ep.name: ep.value for ep in entry_points(group="xdsl.universe")}
    assert names.get("cortex") == "cortex.universe:CORTEX_UNIVERSE"


def test_multiverse_has_the_dialect_and_every_existing_pass():
    multiverse = Universe.get_multiverse()
    assert multiverse.all_dialects["cortex"]().name == "cortex"
    existing = cortex_passes()
    assert existing, "no cortex pass module exists yet"
    for name in existing:
        cls = multiverse.all_passes[name]()
        assert issubclass(cls, ModulePass) and cls.name == name
    # Every registered name is one the registry knows (no stray entries).
    cortex_names = {n for n in multiverse.all_passes if n.startswith("cortex-") or "cortex" in n}
    assert cortex_names <= set(PASS_LOCATIONS)


@pytest.mark.skipif(shutil.which("xdsl-opt") is None, reason="xdsl-opt is not on PATH")
def test_xdsl_opt_parses_the_l2_pipeline():
    # waits for xdsl-opt's exit, however loaded the machine (pytest-timeout is the net for a hang)
    run = subprocess.run(["xdsl-opt", str(EXAMPLE)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "cortex.score_fusion" in run.stdout
    assert "func.func @l2_frame" in run.stdout


@pytest.mark.skipif(shutil.which("xdsl-opt") is None, reason="xdsl-opt is not on PATH")
def test_xdsl_opt_runs_a_cortex_pass():
    if "cortex-specialize-mode" not in cortex_passes():
        pytest.skip("cortex-specialize-mode has not landed")
    run = subprocess.run(
        ["xdsl-opt", str(EXAMPLE), "-p", "cortex-specialize-mode{mode=power_save}"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    # Mode specialisation replaces the mode's weights with constants (the blur gate's inputs stay inputs).
    assert 'cortex.weight "w' not in run.stdout and 'cortex.weight "blur_threshold"' in run.stdout
    assert "cortex.score_fusion" in run.stdout
