"""The bundled L2 pipeline and the small tensor graphs. `L2_PIPELINE` is the pipeline's file."""

from cortex.examples.l2_pipeline import L2_PIPELINE, SCENE_ONLY

__all__ = ["L2_PIPELINE", "SCENE_ONLY"]
