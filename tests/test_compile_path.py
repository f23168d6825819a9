"""One straight compile path: the options checked once per compile into plain values (the weight table,
the parsed pipelines, a typed scene-change precision), the user's pass pipeline parsed once, and every
pass's reports collected through one channel (`cortex.passes.reporting`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import cortex
from cortex import driver, options
from cortex.driver import apply_passes, compile_program
from cortex.options import CompileOptions
from cortex.passes.reporting import ReportingPass, apply_pass

FAST_MATH = "cortex-canonicalize{fast-math=true}"


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[CompileOptions]:
    """Every `CompileOptions` check, in order."""
    seen: list[CompileOptions] = []
    check = CompileOptions._check

    def spy(self: CompileOptions, *args: object) -> None:
        seen.append(self)
        check(self, *args)  # type: ignore[arg-type]  # replace hands over what it parsed

    monkeypatch.setattr(CompileOptions, "_check", spy)
    return seen


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every pipeline text parsed by the options or the driver."""
    seen: list[str] = []
    for module in (options, driver):
        parse = module.parse_pipeline

        def spy(spec: str, *args: object, parse=parse) -> object:  # type: ignore[no-untyped-def]
            seen.append(spec)
            return parse(spec, *args)

        monkeypatch.setattr(module, "parse_pipeline", spy)
    return seen


@pytest.mark.parametrize("fields", [{}, {"mode": "motion", "passes": FAST_MATH}, {"modes": ["balanced", "motion"]},
                                    {"specialize": False, "split": False}])
def test_one_check_per_compile(checks: list[CompileOptions], fields: dict) -> None:
    cortex.compile(cortex.parse(small_l2_text()), **fields)
    assert len(checks) == 1


def test_one_check_for_a_shape_generic_compile_and_its_shapes(checks: list[CompileOptions]) -> None:
    generic = cortex.compile(cortex.parse(cortex.examples.L2_PIPELINE), mode="motion")
    generic.specialize((SMALL[0], SMALL[1], 3))
    assert len(checks) == 1


def test_options_object_is_not_checked_again(checks: list[CompileOptions]) -> None:
    made = CompileOptions(passes=FAST_MATH)
    compile_program(cortex.parse(small_l2_text()), made)
    assert checks == [made]


def test_user_pipeline_parsed_once_per_compile(parses: list[str]) -> None:
    cortex.compile(cortex.parse(small_l2_text()), passes=FAST_MATH, post_passes="cse")
    assert sum(FAST_MATH in spec for spec in parses) == 1
    assert sum(spec.endswith("cse") for spec in parses) == 1


def test_precision_is_a_typed_value_read_from_the_parsed_passes() -> None:
    assert CompileOptions().scene_precision == "f64"
    assert CompileOptions(passes=FAST_MATH).scene_precision == "f32"
    assert CompileOptions(passes=FAST_MATH, precision="f64").scene_precision == "f64"
    assert CompileOptions(passes="cortex-canonicalize{fast-math=false}").scene_precision == "f64"


def test_compile_plan_runs_the_printed_pipeline() -> None:
    made = CompileOptions(passes=FAST_MATH, post_passes="cse")
    optimise, lowering = options.compile_plan(made)
    assert (optimise.text, lowering.text) == options.compile_phases(made)
    assert [p.name for p in optimise.passes()] == [p.name for p in cortex.registry.parse_pipeline(optimise.text)]
    assert made.pass_list("passes")[0] in optimise.passes()  # the user's pipeline as parsed when checked


@dataclass(frozen=True)
class CountOps(ModulePass):
    """A toy pass with a report: the number of ops it saw."""

    name = "test-count-ops"

    def apply_reporting(self, ctx: Context, op: ModuleOp) -> list[int]:
        return [sum(1 for _ in op.walk())]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_reporting(ctx, op)


def test_any_pass_reports_through_one_channel() -> None:
    module = cortex.parse(small_l2_text())
    assert isinstance(CountOps(), ReportingPass)
    assert apply_pass(CountOps(), Context(), module) == [sum(1 for _ in module.walk())]
    reuse, *_ = cortex.registry.parse_pipeline("cortex-decompose-scene-change,cortex-temporal-reuse{report=false}")
    reports = apply_passes(module, [CountOps(), *cortex.registry.parse_pipeline("cortex-decompose-scene-change"),
                                    *cortex.registry.parse_pipeline("cortex-temporal-reuse{report=false}")])
    assert isinstance(reports[0], int)
    assert [type(r).__name__ for r in reports[1:]] == ["ReuseReport"]


def test_compile_with_weights_per_mode() -> None:
    """`weights={mode: row}` with `modes`: each row checked against the module, and used."""
    module = cortex.parse(small_l2_text())
    both = cortex.compile(module, modes=["balanced", "motion"], weights={"balanced": {"wc": 0.5}})
    alone = cortex.compile(module, mode="balanced", weights={"wc": 0.5})
    frame = np.random.default_rng(0).integers(0, 256, (*SMALL, 3), dtype=np.uint8)
    for got, want in zip(both(frame, mode="balanced"), alone(frame)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(cortex.CortexError, match="unknown weight 'wq'"):
        cortex.compile(module, modes=["balanced", "motion"], weights={"balanced": {"wq": 0.5}})


def test_replace_checks_again_but_parses_only_a_changed_pipeline(parses: list[str], checks: list[CompileOptions]) -> None:
    made = CompileOptions(passes=FAST_MATH, post_passes="cse")
    assert len(parses) == 2
    motion = made.replace(mode="motion")
    assert len(parses) == 2 and len(checks) == 2  # checked again (a new object), nothing parsed again
    assert motion.pass_list("passes") is made.pass_list("passes") and motion.mode == "motion"
    assert motion == dataclasses.replace(made, mode="motion")  # what the copy was before: the same options
    before = len(parses)
    other = motion.replace(passes="canonicalize")
    assert parses[before:] == ["canonicalize"] and other.pass_list("post_passes") is made.pass_list("post_passes")
    with pytest.raises(cortex.CortexError, match="unknown mode 'fast'"):
        made.replace(mode="fast")
    with pytest.raises(TypeError, match="unexpected keyword argument 'speed'"):
        made.replace(speed=2)  # type: ignore[call-arg]
