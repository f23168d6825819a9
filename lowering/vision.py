"""Lowering of the compilable vision stages (gray, center_crop, saliency_dft, motion_map,
score_fusion, temporal_smooth) to linalg/arith/math on tensors.

Semantics are the reference kernels' (`cortex.semantics.vision_kernels`);
where a stage depends on the shape alone (center_crop) or needs constant
matrices (saliency_dft), the lowering computes them at compile time with
the same functions, so there is one definition of each constant.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from cortex.dialects.vision import (
    CenterCropOp,
    GrayOp,
    MotionMapOp,
    SaliencyDftOp,
    ScoreFusionOp,
    TemporalSmoothOp,
)
from cortex.lowering import builders as s
from cortex.lowering.base import CortexLowering, lowers
from cortex.lowering.builders import PARALLEL, REDUCTION, LinalgBuilder, affine_map, shape_of
from cortex.lowering.spectral import dft_matrices, replicate_band
from cortex.lowering.unsigned import as_signless
from cortex.semantics import vision_kernels as kernels


@lowers(GrayOp)
class LowerGray(CortexLowering[GrayOp]):
    """Y[h, w] = Σ_c uitofp(frame[h, w, c])·k[c]: a reduction over the channel, k = (0.114, 0.587, 0.299)."""

    def lower(self, op: GrayOp, b: LinalgBuilder) -> list[SSAValue]:
        frame = as_signless(op.frame, b.rewriter)
        h, w, _ = shape_of(frame)
        weights = b.constant(np.array(kernels.GRAY_WEIGHTS_BGR, np.float32))
        init = b.full((h, w), 0.0)
        maps = [affine_map(3, [0, 1, 2]), affine_map(3, [2]), affine_map(3, [0, 1])]
        body = lambda pixel, weight, acc: s.addf(acc, s.mulf(s.uitofp(pixel), weight))  # noqa: E731
        return [b.generic([frame, weights], init, maps, [PARALLEL, PARALLEL, REDUCTION], body)]


@lowers(CenterCropOp)
class LowerCenterCrop(CortexLowering[CenterCropOp]):
    """The centre prior depends on the shape alone: a constant."""

    def lower(self, op: CenterCropOp, b: LinalgBuilder) -> list[SSAValue]:
        image = np.broadcast_to(np.float32(0), shape_of(op.gray))
        prior = kernels.center_crop(image, block=op.block.value.data, sigma=op.sigma.value.data)
        return [b.constant(prior)]


@lowers(MotionMapOp)
class LowerMotionMap(CortexLowering[MotionMapOp]):
    """Block sums of |gray − prev_gray|, scaled by 1/(block²·255)."""

    def lower(self, op: MotionMapOp, b: LinalgBuilder) -> list[SSAValue]:
        block = op.block.value.data
        diff = b.elementwise(lambda x, y: s.absf(s.subf(x, y)), op.gray, op.prev_gray)
        return [b.scale(b.block_sum(diff, block, block), 1.0 / (block * block * 255.0))]


@lowers(ScoreFusionOp)
class LowerScoreFusion(CortexLowering[ScoreFusionOp]):
    """S = w₀·m₀ + w₁·m₁ + …, one elementwise generic (the weights are scalar inputs)."""

    def lower(self, op: ScoreFusionOp, b: LinalgBuilder) -> list[SSAValue]:
        n = len(op.maps)

        def body(*args: SSAValue) -> SSAValue:
            maps, weights = args[:n], args[n:]
            total = s.mulf(maps[0], weights[0])
            for m, w in zip(maps[1:], weights[1:]):
                total = s.addf(total, s.mulf(m, w))
            return total

        return [b.elementwise(body, *op.maps, *op.weights)]


@lowers(TemporalSmoothOp)
class LowerTemporalSmooth(CortexLowering[TemporalSmoothOp]):
    """select(scene > threshold, score, α·prev + (1−α)·score): the test is one scalar cmpf."""

    def lower(self, op: TemporalSmoothOp, b: LinalgBuilder) -> list[SSAValue]:
        alpha = op.alpha.value.data
        threshold = b.scalar(op.reset_threshold.value.data)
        reset = b.add(arith.CmpfOp(op.scene, threshold, "ogt")).result

        def body(score: SSAValue, prev: SSAValue, keep: SSAValue) -> SSAValue:
            smoothed = s.addf(s.mulf(s.const(alpha), prev), s.mulf(s.const(1.0 - alpha), score))
            return s.select(keep, score, smoothed)

        return [b.elementwise(body, op.score, op.prev_score, reset)]


@lowers(SaliencyDftOp)
class LowerSaliencyDft(CortexLowering[SaliencyDftOp]):
    """Spectral residual with the DFTs and filters as matmuls by compile-time matrices.

    pool by `scale` → F = DFT2 → L = log(|F| + ε) → R = L − box3(L) →
    G = e^R·(Re F, Im F)/|F| (θ = 0 where |F| = 0) → |IDFT2(G)|² →
    Gaussian 5×5 σ=1 → / max if max > 0 → pool to the block grid.

    In float32 this matches the float64 reference to ~1e-5 on natural
    images. Where |F| is (nearly) zero the phase θ is numerically
    undefined, so images with exact spectral zeros (flat or piecewise-flat
    synthetic patterns) give a different, equally arbitrary result; an
    all-zero image gives the reference's result exactly.
    """

    def lower(self, op: SaliencyDftOp, b: LinalgBuilder) -> list[SSAValue]:
        scale, block = op.scale.value.data, op.block.value.data
        small = b.scale(b.block_sum(op.gray, scale, scale), 1.0 / (scale * scale))
        h, w = shape_of(small)
        (ch, sh), (cw, sw) = dft_matrices(h), dft_matrices(w)

        def matmul_acc(x: SSAValue, y: SSAValue, init: SSAValue) -> SSAValue:
            return b.matmul(x, y, init)

        # Forward DFT: P = Ch·A, Q = Sh·A; Re = P·Cw − Q·Sw; Im = −P·Sw − Q·Cw.
        Ch, Sh, Cw, Sw = (b.constant(m) for m in (ch, sh, cw, sw))
        neg_Sw, neg_Cw = b.constant(-sw), b.constant(-cw)
        p, q = b.matmul(Ch, small), b.matmul(Sh, small)
        re = matmul_acc(q, neg_Sw, b.matmul(p, Cw))
        im = matmul_acc(q, neg_Cw, b.matmul(p, neg_Sw))

        magnitude = b.elementwise(lambda x, y: s.sqrt(s.addf(s.mulf(x, x), s.mulf(y, y))), re, im)
        log_amplitude = b.elementwise(lambda m: s.log(s.addf(m, s.const(kernels.SALIENCY_EPS))), magnitude)
        box = np.full(3, 1.0 / 3.0)
        smoothed = b.matmul_chain(b.constant(replicate_band(h, box)), log_amplitude, b.constant(replicate_band(w, box).T))
        residual = b.elementwise(lambda la, sm: s.exp(s.subf(la, sm)), log_amplitude, smoothed)

        # e^R·(cos θ, sin θ) with cos θ = Re/|F|, sin θ = Im/|F|, and θ = 0 where |F| = 0.
        def real_part(e: SSAValue, x: SSAValue, m: SSAValue) -> SSAValue:
            return s.select(s.cmpf(m, s.const(0.0), "ogt"), s.divf(s.mulf(e, x), m), e)

        def imaginary_part(e: SSAValue, x: SSAValue, m: SSAValue) -> SSAValue:
            return s.select(s.cmpf(m, s.const(0.0), "ogt"), s.divf(s.mulf(e, x), m), s.const(0.0))

        g_re = b.elementwise(real_part, residual, re, magnitude)
        g_im = b.elementwise(imaginary_part, residual, im, magnitude)

        # Inverse DFT (unnormalised): U = Ch·Gr − Sh·Gi, V = Ch·Gi + Sh·Gr; Z = (U + iV)(Cw + iSw).
        neg_Sh = b.constant(-sh)
        u = matmul_acc(neg_Sh, g_im, b.matmul(Ch, g_re))
        v = matmul_acc(Sh, g_re, b.matmul(Ch, g_im))
        z_re = matmul_acc(v, neg_Sw, b.matmul(u, Cw))
        z_im = matmul_acc(v, Cw, b.matmul(u, Sw))
        norm = 1.0 / float(h * w) ** 2
        power = b.elementwise(
            lambda x, y: s.mulf(s.addf(s.mulf(x, x), s.mulf(y, y)), s.const(norm)), z_re, z_im
        )

        taps = kernels.gaussian_taps(5, 1.0)
        blurred = b.matmul_chain(b.constant(replicate_band(h, taps)), power, b.constant(replicate_band(w, taps).T))
        peak = b.reduce(blurred, [0, 1], "max")

        def normalise(x: SSAValue, m: SSAValue) -> SSAValue:
            return s.select(s.cmpf(m, s.const(0.0), "ogt"), s.divf(x, m), x)

        normalised = b.elementwise(normalise, blurred, peak)
        cell = block // scale
        return [b.scale(b.block_sum(normalised, cell, cell), 1.0 / (cell * cell))]



__all__ = ["LowerCenterCrop", "LowerGray", "LowerMotionMap", "LowerSaliencyDft", "LowerScoreFusion", "LowerTemporalSmooth"]
