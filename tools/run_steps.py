"""cortex-run's own passes, before it compiles: pass pipelines in `cortex-opt -p` syntax, run with
`cortex.run_passes` and printed by `cortex-run --print-pipeline` beside the compile's own
(`cortex.options.compile_pipeline_text`), so every step a run takes is one a user can read and rerun.

- *preparation*, on the pipeline itself (what the DCE and HTML reports show): a shape-generic entry bound
  to the video's frames (`binding_pipeline`: `cortex-pad-frames` pads them to the block grid in IR where
  needed, `cortex-specialize-shapes` binds every shape; nothing compiles after the first frame), then the
  `--weight` overrides baked in (`cortex-specialize-weights`), on every backend alike;
- *probes*, on the copy that is compiled: the blur gate's values (`cortex-expose-blur-gate`: the frame log
  and the skipped-frame count) and, for `--report`, the scene measure (`cortex-expose-scene-change`) made
  results of the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from cortex.passes.expose_gate import EXPOSED
from cortex.passes.expose_scene_change import SceneProbe, reset_threshold
from cortex.passes.specialize_mode import weight_values_text
from cortex.semantics.modes import DEFAULT_ENTRY


@dataclass(frozen=True)
class RunSteps:
    """The passes one run takes before compiling (see the module docstring)."""

    entry: str = DEFAULT_ENTRY
    bind: str = ""  # the passes binding a shape-generic entry to the video's frames (`binding_pipeline`)
    weights: Mapping[str, float] = field(default_factory=dict)  # --weight overrides
    report: bool = False  # --report: the scene measure too

    def preparation(self) -> str:
        steps = []
        if self.bind:
            steps.append(self.bind)
        if self.weights:
            steps.append(f'cortex-specialize-weights{{weights="{weight_values_text(self.weights)}"}}')
        return ",".join(steps)

    def probes(self) -> str:
        steps = [f"cortex-expose-blur-gate{{entry={self.entry}}}"]
        if self.report:
            steps.append(f"cortex-expose-scene-change{{entry={self.entry}}}")
        return ",".join(steps)

    def text(self, compile_text: str) -> str:
        """Every pass of the run, in order: preparation, probes, then the compile's."""
        return ",".join(filter(None, [self.preparation(), self.probes(), compile_text]))

    def exposed(self, results_before: int, results_after: int, module: ModuleOp) -> tuple[bool, SceneProbe | None]:
        """(whether the blur gate's values are results now, the scene measure's place or None), from the
        entry's result count before and after the probes (the gate adds its three values, the scene one)."""
        added = results_after - results_before
        gate = added >= len(EXPOSED)
        scene = None
        if self.report and added in (1, len(EXPOSED) + 1):
            scene = SceneProbe(results_after - 1, reset_threshold(module))
        return gate, scene


__all__ = ["RunSteps"]
