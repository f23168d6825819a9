"""The engines' table and interface (`cortex.runtime.engines`): one row per engine, each module imported only
when its engine is asked for, one way to refuse options, and no string dispatch or state written behind the
caller's back anywhere in the runtime."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import compiled, frames_of

from cortex.errors import CortexError
from cortex.runtime.engines import ENGINES, engine_named
from cortex.runtime.pipeline import ENGINES as PIPELINE_ENGINES

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"


def test_the_table_names_each_engine_once():
    assert list(ENGINES) == ["threads", "processes", "ray"] and len(ENGINES) == 3
    assert PIPELINE_ENGINES is ENGINES  # one meaning of "engine"
    for name in ENGINES:
        engine = ENGINES[name]
        assert engine.name == name and engine is engine_named(name)
        assert isinstance(engine.options, tuple) and isinstance(engine.profiles, bool)
    assert [n for n in ENGINES if ENGINES[n].profiles] == ["threads"]


@pytest.mark.parametrize("name", ["fibres", "", None, 3, "Threads"])
def test_an_unknown_engine_is_one_line_before_anything_runs(name):
    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match=r"^unknown engine .* \(engines: threads, processes, ray\)$"):
        b.run_video(frames_of(SMALL, 2), engine=name)


@pytest.mark.parametrize("name, said", [("threads", r"takes no options \['bogus'\]"),
                                        ("processes", "takes the option chunk; got bogus"),
                                        ("ray", "takes the options address, chunk, num_cpus, session, worker_setup; got bogus")])
def test_each_engine_refuses_an_option_it_does_not_take(name, said):
    with pytest.raises(CortexError, match=rf"^engine '{name}' {said}$"):
        compiled(small_l2_text()).run_video(frames_of(SMALL, 2), engine=name, bogus=1)


def test_importing_the_runtime_loads_no_pool_and_no_ray():
    """The processes and Ray engines' modules are imported when first asked for, not by `run_video`'s module."""
    code = ("import sys, cortex.runtime.pipeline\n"
            "print(sorted(m for m in sys.modules if m.startswith(('cortex.runtime.engines.processes', "
            "'cortex.runtime.engines.ray', 'ray', 'concurrent.futures.process'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_no_engine_is_chosen_by_comparing_its_name_and_none_writes_the_pipelines_state():
    sources = {p: p.read_text() for p in RUNTIME.rglob("*.py")}
    assert not [p for p, text in sources.items() if re.search(r"engine\s*==\s*['\"]", text)]
    engines = {p: text for p, text in sources.items() if "engines" in p.parts}
    assert not [p for p, text in engines.items() if re.search(r"pipeline\.state\s*=(?!=)", text)]


def test_several_options_an_engine_does_not_take_are_named_in_sorted_order():
    """However they were spelled in the call, the refused options come out sorted: one message for one call."""
    from cortex.runtime.engines.base import unknown_options

    names = ["zeta", "mu", "alpha", "omega", "beta", "kappa"]
    with pytest.raises(CortexError, match=r"^engine 'threads' takes no options \['alpha', 'beta', 'kappa', 'mu', "
                                          r"'omega', 'zeta'\]$"):
        unknown_options("threads", dict.fromkeys(names, 1), ())
    with pytest.raises(CortexError, match="^engine 'processes' takes the option chunk; got alpha, beta, kappa, mu, "
                                          "omega, zeta$"):
        compiled(small_l2_text()).run_video(frames_of(SMALL, 2), engine="processes", **dict.fromkeys(names, 1))


@pytest.mark.parametrize("chunk, refused", [(1, False), (4096, False), (0, True), (4097, True)])
def test_the_processes_chunk_is_a_whole_number_from_1_to_4096(chunk, refused):
    """Checked before any worker process starts."""
    from cortex.runtime.engines.processes import check_process_options

    if refused:
        with pytest.raises(CortexError, match=f"^chunk must be a whole number from 1 to 4096, got {chunk}$"):
            check_process_options({"chunk": chunk})
    else:
        check_process_options({"chunk": chunk})
