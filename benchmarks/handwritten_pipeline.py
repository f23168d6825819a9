"""The L2 pipeline written by hand, in plain Python: plain function calls in sequence.

    gray → blur → scene_change → text_roi → saliency → motion → fusion → smooth → encoder

State lives in instance variables (`self._prev_gray`, `self._prev_score`),
every stage runs on every unblurred frame (a hand-written pipeline does not skip
zero-weight stages), and the kernels are the project's own
(`cortex.semantics.vision_kernels`), so the comparison with the compiled
pipeline is about scheduling and code generation, not about different
kernels. This is the baseline of `bench_schedule.py`.
"""

from __future__ import annotations

import numpy as np

from cortex.semantics import vision_kernels as vk
from cortex.semantics.modes import mode_weights

BLUR_THRESHOLD = 100.0


class HandwrittenPipeline:
    def __init__(self, height: int, width: int, mode: str = "balanced", block: int = 32):
        self.block = block
        w = mode_weights(mode)
        self.weights = [w["wc"], w["wt"], w["ws"], w["wm"]]
        self._prev_gray = np.zeros((height, width), np.float32)
        self._prev_score = np.zeros((height // block, width // block), np.float32)

    def __call__(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gray = vk.gray(frame)
        sharpness = vk.blur_detector(gray)
        if sharpness < BLUR_THRESHOLD:
            score = self._prev_score
        else:
            scene = vk.scene_change(gray, self._prev_gray)
            text = vk.text_roi(gray, block=self.block)
            saliency = vk.saliency_dft(gray, block=self.block)
            motion = vk.motion_map(gray, self._prev_gray, block=self.block)
            center = vk.center_crop(gray, block=self.block)
            fused = vk.score_fusion([center, text, saliency, motion], self.weights)
            score = vk.temporal_smooth(fused, self._prev_score, scene)
        self._prev_gray, self._prev_score = gray, score
        return vk.encoder(frame, score, block=self.block), score
