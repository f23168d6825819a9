"""The mutants of `scripts/mutate.py`: one exact-substring edit each, and the tests that should notice.

`old` must occur exactly once in `path` (relative to the repository root);
`tests` are the pytest files (or node ids) a developer would expect to
catch it: run alone by default, and first (then every other test file, then
lit) with `--whole-suite`. When code moves, update `path`/`old` here
(`python3 scripts/mutate.py --check` lists the entries in error).

Newer lists live one to a module in `scripts/mutant_lists/`, each a `MUTANTS`
list; they are appended here in file-name order, so a new list is a new file.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from mutant import Mutant

T_LAYOUT = "tests/test_layout_differential.py"
T_OWN = "tests/test_ownership.py"
T_SIGNED = "tests/test_signed_weights.py"
T_FOLD = "tests/test_fold_limit.py"
T_VERIFY = "tests/test_verifier_rules.py"
T_THRESH = "tests/test_thresholds.py"

# Seven edits no pytest test caught at first: four passed every test, three only lit noticed.
LIT_ONLY = [
    Mutant(
        "transpose-inverse-perm",
        "backends/numpy/linalg.py",
        "perm = list(op.permutation.get_values())",
        "perm = [int(i) for i in np.argsort(list(op.permutation.get_values()))]",
        (T_LAYOUT, "tests/test_numpy_backend.py"),
    ),
    Mutant(
        "runtime-no-alias-check",
        "runtime/parts.py",
        'if hasattr(value, "shape") and aliased(value, outputs, args):',
        "if False:",
        (T_OWN, "tests/test_numpy_backend.py"),
    ),
    Mutant(
        "fusion-drops-negative-weights",
        "dialects/canonicalization.py",
        "owner.value.value.data == 0.0",
        "owner.value.value.data <= 0.0",
        (T_SIGNED, "tests/test_canonicalize.py"),
    ),
    Mutant(
        "fold-limit-exclusive",
        "dialects/folding.py",
        "return count is not None and count <= MAX_FOLDED_ELEMENTS",
        "return count is not None and count < MAX_FOLDED_ELEMENTS",
        (T_FOLD, "tests/test_canonicalize.py"),
    ),
    Mutant(
        "verifier-no-conv2d-channel-rule",
        "dialects/shapes.py",
        "if not dims_agree(x[1], w[1] * group if x[1] != DYNAMIC else DYNAMIC):",
        "if False:",
        (T_VERIFY,),
    ),
    Mutant(
        "verifier-duplicate-reduce-axes",
        "dialects/shapes.py",
        "if len(set(norm)) != len(norm):",
        "if False:",
        (T_VERIFY,),
    ),
    Mutant(
        "temporal-smooth-oge",
        "lowering/vision.py",
        'reset = b.add(arith.CmpfOp(op.scene, threshold, "ogt")).result',
        'reset = b.add(arith.CmpfOp(op.scene, threshold, "oge")).result',
        (T_THRESH,),
    ),
]


T_KERNELS = "tests/test_kernels.py"
T_REF = "tests/test_reference.py"
T_EXAMPLES = "tests/test_examples.py"
T_NP = "tests/test_numpy_backend.py"
T_LOWER = "tests/test_lowering.py"
T_CANON = "tests/test_canonicalize.py"
T_HYPO = "tests/test_passes_hypothesis.py"
T_DCE = "tests/test_specialize_dce.py"
T_PART = "tests/test_partition.py"
T_PATTERN = "tests/test_pattern.py"
T_OPT = "tests/test_cortex_opt.py"
T_ARITH = "tests/test_numpy_arith_semantics.py"

# One or a few per area, written after the tests that catch the seven above.
FRESH = [
    # ---- reference kernels
    Mutant("kernel-softmax-global-sum", "semantics/tensor_kernels.py",
           "return e / e.sum(axis=axis, keepdims=True)", "return e / e.sum(keepdims=True)", (T_KERNELS, T_EXAMPLES)),
    Mutant("kernel-avg-pool-counts-padding", "semantics/tensor_kernels.py",
           "counts = _windows(_pad_hw(ones, pads, 0.0)", "counts = _windows(_pad_hw(ones, pads, 1.0)", (T_KERNELS, T_LOWER)),
    Mutant("kernel-max-pool-pads-zero", "semantics/tensor_kernels.py",
           "_pad_hw(x, pads, -np.inf)", "_pad_hw(x, pads, 0.0)", (T_KERNELS, T_LOWER)),
    Mutant("kernel-conv2d-kernel-transposed", "semantics/tensor_kernels.py",
           "np.einsum(\"ngchwij,gocij->nhwgo\"", "np.einsum(\"ngchwij,gocji->nhwgo\"", (T_KERNELS, T_EXAMPLES, T_LOWER)),
    Mutant("kernel-center-crop-sigma", "semantics/vision_kernels.py",
           "np.exp(-d2 / (2.0 * sigma * sigma))", "np.exp(-d2 / (2.0 * sigma))", (T_KERNELS, T_REF)),
    Mutant("kernel-motion-scale", "semantics/vision_kernels.py",
           "(block_mean(diff, block) / 255.0)", "(block_mean(diff, block) / 256.0)", (T_KERNELS, T_REF)),
    Mutant("kernel-fusion-ignores-first-weight", "semantics/vision_kernels.py",
           "total = np.multiply(maps[0], F32(weights[0]), dtype=F32)", "total = np.array(maps[0], dtype=F32)",
           (T_KERNELS, T_REF, T_SIGNED)),
    Mutant("kernel-low-score-le", "semantics/vision_kernels.py",
           "return score < F32(threshold) * F32(peak)", "return score <= F32(threshold) * F32(peak)",
           (T_KERNELS, T_THRESH)),
    Mutant("kernel-temporal-smooth-ge", "semantics/vision_kernels.py",
           "if scene > reset_threshold:", "if scene >= reset_threshold:", (T_KERNELS, T_THRESH)),
    Mutant("kernel-saliency-box", "semantics/vision_kernels.py",
           "box = np.full(3, 1.0 / 3.0)", "box = np.full(3, 1.0 / 4.0)", (T_KERNELS, T_LOWER)),
    Mutant("kernel-gelu-tanh-cube", "semantics/tensor_kernels.py",
           "D.GELU_TANH_K * x64**3", "D.GELU_TANH_K * x64**2", (T_KERNELS, T_EXAMPLES)),
    # ---- canonicalisation and folding
    Mutant("canon-unit-ignores-commutativity", "dialects/canonicalization.py",
           "if op.has_trait(Commutative) and is_splat_of(lhs, constant):", "if is_splat_of(lhs, constant):",
           (T_CANON, T_HYPO)),
    Mutant("canon-compose-perms-reversed", "dialects/canonicalization.py",
           "return tuple(inner[p] for p in outer)", "return tuple(outer[p] for p in inner)", (T_CANON, T_HYPO)),
    Mutant("canon-forward-ignores-type", "dialects/canonicalization.py",
           "if value.type != op.results[0].type:", "if False:", (T_CANON, T_HYPO)),
    Mutant("canon-pow-three-as-square", "dialects/canonicalization.py",
           "is_splat_of(op.rhs, 2.0)", "is_splat_of(op.rhs, 3.0)", (T_CANON, T_HYPO)),
    Mutant("canon-splat-any-element", "dialects/canonicalization.py",
           "bool(np.all(array == number))", "bool(np.any(array == number))", (T_CANON, T_HYPO)),
    Mutant("canon-mul-zero-by-default", "dialects/canonicalization.py",
           "    PowOp: (PowTwo(),),\n", "    PowOp: (PowTwo(),),\n    MulOp: (RightUnit(1.0), Absorb(0.0)),\n", (T_CANON, T_HYPO)),
    Mutant("fold-external-ops", "dialects/folding.py",
           "and not op_class.has_trait(External)\n", "\n", (T_CANON, T_DCE)),
    # ---- verifier
    Mutant("verify-broadcast-any-size", "dialects/shapes.py",
           "elif y == DYNAMIC or x == y:", "elif True:", (T_VERIFY,)),
    Mutant("verify-alpha-above-one", "dialects/vision.py",
           "if not 0.0 <= alpha <= 1.0:", "if not 0.0 <= alpha:", (T_VERIFY,)),
    # ---- DCE and mode specialisation
    Mutant("dce-removes-state-writes", "dialects/state.py",
           "traits = traits_def(MemoryWriteEffect(), FrameBoundary())", "traits = traits_def(Pure(), FrameBoundary())",
           (T_DCE, T_OWN)),
    Mutant("dce-reports-replaced-ops", "passes/dce.py",
           "if op.name.startswith(\"cortex.\") and op not in alive and op not in replaced",
           "if op.name.startswith(\"cortex.\") and op not in alive", (T_DCE,)),
    Mutant("specialize-missing-weight-unchecked", "passes/specialize_mode.py",
           "    if missing:\n", "    if False:\n", (T_DCE, T_OPT)),
    # ---- partition
    Mutant("partition-no-cycle-check", "passes/partition.py",
           "if a == b or creates_cycle(a, b, horizon):", "if a == b:", (T_PART,)),
    Mutant("partition-effects-unordered", "passes/partition.py",
           "            if not is_side_effect_free(op):\n                if last_effect",
           "            if False:\n                if last_effect", (T_PART,)),
    Mutant("partition-outlines-dead-code", "passes/partition.py",
           "return all(is_side_effect_free(op) for op in group) and not any(", "return False and not any(", (T_PART,)),
    # ---- lowering
    Mutant("lower-mean-first-axis-count", "lowering/tensor_ops.py",
           "count = float(pymath.prod(shape[a] for a in axes))", "count = float(pymath.prod(shape[a] for a in axes[:1]))",
           (T_LOWER, T_LAYOUT)),
    Mutant("lower-avg-pool-window-count", "lowering/tensor_ops.py",
           "return ((cells >= 0) & (cells < size)).sum(axis=1)", "return (cells < size).sum(axis=1)",
           (T_LOWER,)),
    Mutant("lower-avg-pool-left-pad-as-top", "lowering/tensor_ops.py",
           "window_counts(w, kernel[1], strides[1], left, out[3], dilations[1])",
           "window_counts(w, kernel[1], strides[1], top, out[3], dilations[1])",
           (T_LOWER,)),
    Mutant("lower-max-pool-pads-zero", "lowering/tensor_ops.py",
           "x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], -pymath.inf)",
           "x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], 0.0)", (T_LOWER,)),
    Mutant("lower-temporal-smooth-alpha-swapped", "lowering/vision.py",
           "smoothed = s.addf(s.mulf(s.const(alpha), prev), s.mulf(s.const(1.0 - alpha), score))",
           "smoothed = s.addf(s.mulf(s.const(1.0 - alpha), prev), s.mulf(s.const(alpha), score))", (T_LOWER, T_THRESH)),
    # ---- NumPy emitter and runtime support
    Mutant("emit-cmpf-olt-as-ole", "backends/numpy/arith.py",
           '4: _relation("<"),', '4: _relation("<="),', (T_NP, T_THRESH)),
    Mutant("emit-select-swapped", "backends/numpy/arith.py",
           'syntax.call("np.where", c.expr, a.expr, b.expr)', 'syntax.call("np.where", c.expr, b.expr, a.expr)',
           (T_NP, T_LOWER)),
    Mutant("emit-maxnumf-propagates-nan", "backends/numpy/arith.py",
           'arith.MaxnumfOp: Ufunc("np.fmax"),', 'arith.MaxnumfOp: Ufunc("np.maximum"),', (T_NP, T_ARITH)),
    Mutant("emit-remsi-floored", "backends/numpy/arith.py",
           'arith.RemSIOp: Ufunc("np.fmod"),', 'arith.RemSIOp: Ufunc("np.remainder"),', (T_NP, T_ARITH)),
    Mutant("emit-round-half-even", "runtime/numpy_support.py",
           "np.copysign(np.floor(np.abs(x) + 0.5), x)", "np.copysign(np.round(np.abs(x)), x)", (T_NP, T_ARITH)),
    Mutant("emit-align-inverse-order", "backends/numpy/access.py",
           "order = sorted(range(len(acc.dims)), key=lambda a: acc.dims[a])",
           "order = [sorted(acc.dims).index(d) for d in acc.dims]", (T_NP, T_LAYOUT)),
    Mutant("emit-partial-identity-perm", "backends/numpy/access.py",
           "    if perm == sorted(perm):\n        return expr", "    if perm[0] == 0:\n        return expr", (T_NP, T_LAYOUT)),
    Mutant("runtime-returns-read-only-constants", "runtime/values.py",
           "return value if value.flags.writeable else value.copy()", "return value", (T_NP, T_OWN)),
    Mutant("runtime-output-shares-unchanged-state", "runtime/parts.py",
           "aliased(o, held, args)", "False", (T_NP, T_OWN)),
    Mutant("reference-read-only-outputs", "interpreter/reference.py",
           "not value.flags.writeable or any(", "any(", (T_REF, T_OWN)),
    Mutant("reference-output-shares-unchanged-state", "interpreter/reference.py",
           "any(np.may_share_memory(value, h) for h in held)", "False", (T_REF, T_OWN)),
    # ---- pattern matcher
    Mutant("pattern-no-commutative-retry", "rewriting/pattern.py",
           "if len(actual) == 2 and self._is_commutative(op):", "if False:", (T_PATTERN,)),
    Mutant("pattern-rebinding-unchecked", "rewriting/pattern.py",
           "elif self._name in extended and extended[self._name] is not value:", "elif False:", (T_PATTERN,)),
    # ---- diagnostics
    Mutant("diagnostics-any-line", "tools/diagnostics.py",
           "if diag.severity != self.severity or diag.line != self.line:", "if diag.severity != self.severity:", (T_OPT,)),
]


T_FP = "tests/test_frame_parallel.py"
T_RAY = "tests/test_ray_engine.py"
T_LEAD = "tests/test_frame_split_leading.py"
T_SPLIT = "tests/test_frame_split.py"
T_QR = "tests/test_quant_ranges.py"
T_QUANT = "tests/test_quant.py"
T_POOL = "tests/test_pooling_pads.py"
T_TRANSPOSE = "tests/test_transpose_paths.py"
T_GEMM = "tests/test_onnx_gemm.py"
T_ONNX = "tests/test_onnx_frontend.py"
T_WINDOW = "tests/test_window.py"
T_CONVERT = "tests/test_convert_layout.py"
T_RUN_OUT = "tests/test_cortex_run_outputs.py"

# The survivors of an independent whole-suite run (nine behaviours), each with its sibling.
SURVIVORS = [
    Mutant("frame-window-one-more", "runtime/engines/flight.py",
           "while not exhausted and len(fronts) + len(tails) < window:", "while not exhausted and len(fronts) + len(tails) <= window:",
           (f"{T_FP}::test_memory_is_bounded_by_the_window",
            f"{T_RAY}::test_ray_window_counts_chunks_exactly_and_outputs_are_the_callers")),
    Mutant("run-video-state-alias-unchecked", "runtime/parts.py",
           'if hasattr(value, "shape") and aliased(value, outputs, args):', "if False:", (T_OWN,)),
    Mutant("run-video-outputs-shared", "runtime/parts.py",
           "o.copy() if isinstance(o, np.ndarray) and aliased(o, held, args) else o for o in self.caller_outputs(env)",
           "o for o in self.caller_outputs(env)", (T_OWN,)),
    Mutant("ray-before-is-first-frame", "runtime/engines/ray.py",
           "self.before = frames_chunk[-1]", "self.before = frames_chunk[0]",
           (f"{T_RAY}::test_chunks_start_from_the_last_frame_before_them",)),
    Mutant("ray-leading-from-before", "runtime/engines/ray.py",
           "if first == 0 or self.leading else None", "if first == 0 else None", (T_RAY,)),
    Mutant("quant-symmetric-positive-peak", "passes/quantize.py",
           "peak = max(-lo, hi)", "peak = hi", (T_QR, T_QUANT)),
    Mutant("quant-asymmetric-zero-point-sign", "passes/quantize.py",
           "round(Q_MIN - lo / scale)", "round(Q_MIN + lo / scale)", (T_QR, T_QUANT)),
    Mutant("percentile-high-bin-lower", "passes/calibrate.py",
           'int(np.searchsorted(cdf, 1.0 - tail, side="left")) + 1)]', 'int(np.searchsorted(cdf, 1.0 - tail, side="left")))]',
           (T_QR, T_QUANT)),
    Mutant("percentile-low-bin-higher", "passes/calibrate.py",
           'lo = edges[int(np.searchsorted(cdf, tail, side="left"))]', 'lo = edges[int(np.searchsorted(cdf, tail, side="left")) + 1]',
           (T_QR, T_QUANT)),
    Mutant("nhwc-avg-pool-left-pad-as-top", "lowering/layout.py",
           "window_counts(w, kernel[1], strides[1], left, out[2])", "window_counts(w, kernel[1], strides[1], top, out[2])",
           (T_POOL, T_CONVERT)),
    Mutant("reference-pads-left-right-swapped", "semantics/tensor_kernels.py",
           "    top, left, bottom, right = pads\n    if not any(pads):", "    top, right, bottom, left = pads\n    if not any(pads):",
           (T_POOL, T_KERNELS)),
    Mutant("fold-transpose-inverse-perm", "linalg_opt/fold_constant_layouts.py",
           "return np.transpose(value, list(op.permutation.get_values()))",
           "return np.transpose(value, np.argsort(list(op.permutation.get_values())))", (T_TRANSPOSE,)),
    Mutant("reference-transpose-inverse-perm", "semantics/tensor_kernels.py",
           "return np.transpose(as_float(x), perm)", "return np.transpose(as_float(x), np.argsort(perm))", (T_TRANSPOSE, T_KERNELS)),
    Mutant("convert-layout-inverse-is-perm", "passes/convert_layout.py",
           "return tuple(int(i) for i in np.argsort(perm))", "return tuple(int(i) for i in perm)", (T_CONVERT, T_POOL)),
    Mutant("gemm-constant-bias-scaled-by-alpha", "frontends/onnx/contractions.py",
           "c.reshape(-1) * np.float32(beta) if beta != 1.0", "c.reshape(-1) * np.float32(alpha) if beta != 1.0", (T_GEMM,)),
    Mutant("gemm-computed-bias-scaled-by-alpha", "frontends/onnx/contractions.py",
           "c_value = im.build(ctx, ops.MulOp, c_value, im.constant(np.float32(beta)))",
           "c_value = im.build(ctx, ops.MulOp, c_value, im.constant(np.float32(alpha)))", (T_GEMM,)),
    Mutant("gemm-constant-weight-unscaled", "frontends/onnx/contractions.py",
           "weight = weight * np.float32(alpha)", "weight = weight", (T_GEMM, T_ONNX)),
    Mutant("leading-not-transitive", "passes/state_analysis.py",
           "    work = list(leading)\n", "    work = []\n", (T_LEAD,)),
]

# State classification, window kernels, dilations, requantize, verifier, atomic outputs: one-line slips
# a reviewer could miss.
SLIPS = [
    Mutant("split-self-reading-state-delayed", "passes/state_analysis.py",
           "        if not read:\n", "        if set(read) <= {name}:\n", (T_LEAD, T_SPLIT)),
    Mutant("split-gates-ignored", "passes/state_analysis.py",
           "leading = {n for op in gates for n in _states_read(backward_slice([op.cond], block)) if n in candidates}",
           "leading = {n for op in gates[:0] for n in _states_read(backward_slice([op.cond], block)) if n in candidates}",
           (T_LEAD, T_SPLIT)),
    Mutant("window-median-upper", "semantics/window_kernels.py",
           "positive[(positive.size - 1) // 2]", "positive[positive.size // 2]", (T_WINDOW,)),
    Mutant("window-median-counts-zeros", "semantics/window_kernels.py",
           "np.asarray(window) > 0]", "np.asarray(window) >= 0]", (T_WINDOW,)),
    Mutant("lower-window-median-upper", "lowering/window.py",
           '"oge"), s.cmpf(gap, s.const(2.0), "olt")', '"ogt"), s.cmpf(gap, s.const(2.0), "ole")', (T_WINDOW,)),
    Mutant("lower-window-push-keeps-oldest", "lowering/window.py",
           "op.window, [1], [n - 1], [1]", "op.window, [0], [n - 1], [1]", (T_WINDOW,)),
    Mutant("im2col-row-dilation-ignored", "linalg_opt/conv_im2col.py",
           "oh * sh + kh * dh, ow * sw + kw * dw", "oh * sh + kh, ow * sw + kw * dw", ("tests/test_linalg_rewrites.py",)),
    Mutant("unroll-pooling-row-dilation-ignored", "linalg_opt/unroll_pooling.py",
           "[0, 0, i * dh, j * dw]", "[0, 0, i, j * dw]", ("tests/test_linalg_rewrites.py",)),
    Mutant("quant-requantize-zero-point-added", "semantics/quant_kernels.py",
           "centred = (np.asarray(x).astype(I32) - I32(in_zero_point))", "centred = (np.asarray(x).astype(I32) + I32(in_zero_point))",
           (T_QUANT,)),
    Mutant("verify-terminator-types-unchecked", "dialects/structure.py",
           "if got != expected:", "if False:", (T_VERIFY,)),
    Mutant("verify-use-before-definition", "dialects/structure.py",
           "if operand not in visible:", "if False:", (T_VERIFY,)),
    Mutant("atomic-commit-leaves-temporary", "tools/atomic.py",
           "os.replace(self.temporary, self.destination.path)", "import shutil; shutil.copyfile(self.temporary, self.destination.path)",
           (T_RUN_OUT,)),
    Mutant("outputs-video-readback-unchecked", "tools/outputs.py",
           "if readable != self.count:", "if False:", (T_RUN_OUT,)),
]

# Survivors of an independent whole-suite run, each with the test written for the behaviour it breaks.
GAPS = [
    Mutant("gaps-profile-reset-keeps-frame-count", "runtime/pipeline.py",
           "            profiler.reset()\n            self._frames_profiled = 0\n", "            profiler.reset()\n",
           ("tests/test_profile_reset.py",)),
    Mutant("gaps-split-profile-reset-keeps-frame-count", "runtime/pipeline.py",
           "s.seconds, s.cpu_seconds, s.count = 0.0, 0.0, 0\n                self._frames_profiled = 0\n",
           "s.seconds, s.cpu_seconds, s.count = 0.0, 0.0, 0\n", ("tests/test_profile_reset.py",)),
    Mutant("gaps-split-cache-key-ignores-stages", "runtime/pipeline.py",
           "key = (profile, stages or self.program.backend.split_in_stages)",
           "key = (profile, self.program.backend.split_in_stages)", ("tests/test_split_cache.py",)),
    Mutant("gaps-old-program-skips-delayed-part", "runtime/threads.py",
           '[*split.delayed_stages] or [parts["delayed"]]', "[*split.delayed_stages]",
           ("tests/test_old_program_workers.py",)),
    Mutant("gaps-ray-port-65536-accepted", "runtime/engines/ray.py",
           "int(port_text) < 65536", "int(port_text) <= 65536", ("tests/test_ray_port_range.py",)),
    Mutant("gaps-reuse-key-ignores-properties", "passes/temporal_reuse.py",
           "props = tuple(sorted((k, str(a)) for k, a in owner.properties.items()))", "props = ()",
           ("tests/test_reuse_keys.py",)),
    Mutant("gaps-reuse-accepts-negative-zero", "passes/temporal_reuse.py",
           "np.all(array == 0) and not np.any(np.signbit(array))", "np.all(array == 0)", ("tests/test_reuse_keys.py",)),
    Mutant("gaps-leading-one-sweep", "passes/state_analysis.py",
           "    while changed:  # drop candidates", "    if changed:  # drop candidates", ("tests/test_leading_fixpoint.py",)),
    Mutant("gaps-stage-run-spans-branches", "passes/stage_split.py",
           " and op.parent_region() is groups[-1][-1].parent_region():", ":", ("tests/test_stage_split_branches.py",)),
    Mutant("gaps-block-padding-max", "passes/specialize_shapes.py",
           "return math.lcm(*blocks) if blocks else 1", "return max(blocks) if blocks else 1", ("tests/test_block_padding.py",)),
    Mutant("gaps-iree-cache-key-without-cpu", "backends/iree/compiler.py",
           '    if target.host_specific:\n        fields["cpu"] = cpu_fingerprint()\n', "",
           ("tests/test_iree_cache_cpu.py",)),
    Mutant("gaps-digest-text-members-only", "runtime/program.py",
           "if not hmac.compare_digest(hashlib.sha256(raw).hexdigest(), digest):",
           'if ref["encoding"] == "text" and not hmac.compare_digest(hashlib.sha256(raw).hexdigest(), digest):',
           ("tests/test_program_tampering.py", "tests/test_program_integrity.py")),
    Mutant("gaps-inflate-limit-per-member", "runtime/program.py",
           'inflated += archive.getinfo(ref["file"]).file_size',
           'inflated = max(inflated, archive.getinfo(ref["file"]).file_size)',
           ("tests/test_program_tampering.py", "tests/test_program_integrity.py")),
    Mutant("gaps-report-heading-unescaped", "tools/report_html.py",
           'f"<h1>{_esc(title)}</h1>', 'f"<h1>{title}</h1>',
           ("tests/test_report_hostile_names.py", "tests/test_run_report.py")),
    Mutant("gaps-thumbnail-stride-not-doubled", "tools/report_html.py",
           "                self.stride *= 2\n", "",
           ("tests/test_run_report.py", "tests/test_report_hostile_names.py")),
    Mutant("gaps-nan-blur-threshold-accepted", "tools/run_args.py",
           "        if not value >= 0:\n            raise argparse.ArgumentTypeError(f\"must be >= 0",
           "        if value < 0:\n            raise argparse.ArgumentTypeError(f\"must be >= 0",
           ("tests/test_output_safety.py::test_a_blur_threshold_that_is_not_a_number_at_least_zero_is_rejected",
            "tests/test_cortex_run_ux.py")),
    Mutant("gaps-external-data-through-symlink", "frontends/onnx_checks.py",
           "target = Path(os.path.realpath(folder / location)) if location else None",
           "target = Path(os.path.normpath(folder / location)) if location else None",
           ("tests/test_onnx_external_data.py",)),
]

T_CHAIN = "tests/test_process_engine_chain.py"
T_PROC = "tests/test_process_engine.py"
T_BLOCKS = "tests/test_process_engine_blocks.py"

# The processes engine's chain, prepass and fronts' delayed inputs (2026-11-27): each edit gives wrong bytes,
# wrong state or work done twice, and no figure of a benchmark would show it.
CHAIN = [
    Mutant("chain-hands-on-images", "runtime/engines/chunk_worker.py",
           'return getattr(value, "nbytes", 0) <= GIVEN_BYTES', "return True", (T_CHAIN,)),
    Mutant("chain-front-runs-given-stages", "runtime/engines/chunk_worker.py",
           "            if not all(key in given for key in stage.result_keys):\n                stage(env, index)",
           "            stage(env, index)", (T_CHAIN,)),
    Mutant("chain-front-skips-partly-given-stages", "runtime/engines/chunk_worker.py",
           "            if not all(key in given for key in stage.result_keys):",
           "            if not any(key in given for key in stage.result_keys):", (T_CHAIN, T_PROC)),
    Mutant("chain-front-ignores-before", "runtime/engines/chunk_worker.py",
           "delayed, stale = {**inputs, **leading}, self.recompute - inputs.keys()",
           "delayed, stale = {**{n: None for n in inputs}, **leading}, self.recompute - inputs.keys()", (T_CHAIN, T_PROC)),
    Mutant("chain-slice-without-arguments", "runtime/engines/chunk_worker.py",
           "                needed |= set(stage.arg_keys)\n", "", (T_CHAIN, T_PROC)),
    Mutant("chain-prepass-takes-recurrent-stages", "runtime/engines/chunk_worker.py",
           "                if recurrent & set(stage.arg_keys):", "                if False:", (T_CHAIN, T_PROC)),
    Mutant("chain-without-prepass-results", "runtime/engines/chunk_worker.py",
           "            if computed is not None:\n                env.update(computed[k])", "", (T_CHAIN, T_PROC)),
    Mutant("chain-state-not-brought-up", "runtime/engines/processes/scheduler.py",
           "        self.run.hand_back(split.caller_state({**state, **inputs}, result, (frame,)))",
           "        self.run.hand_back(split.caller_state(state, result, (frame,)))", (T_CHAIN, T_PROC)),
    Mutant("chain-state-not-set-when-left", "runtime/engines/processes/scheduler.py",
           "        finally:\n            executor.up_to_date()", "        finally:\n            pass", (T_CHAIN,)),
    Mutant("chain-later-chunks-from-run-start", "runtime/engines/processes/scheduler.py",
           "        start = leading if chunk.before_given else self.start_values",
           "        start = self.start_values", (T_BLOCKS, T_CHAIN, T_PROC)),
]

# The prepass writes each chunk's block and its frames' gray frames (2026-11-27): the front takes them from the
# block, so a slip gives it stale or misplaced bytes, or makes it compute them again unseen.
PREPASS_BLOCKS = [
    Mutant("blocks-prepass-hands-nothing", "runtime/engines/chunk_worker.py",
           "            if hand is not None:\n                hand(", "            if False:\n                hand(",
           (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-put-writes-nothing", "runtime/engines/processes/blocks.py",
           "                    np.ndarray(slot[0], np.dtype(slot[1]), buffer=self.shm.buf, offset=slot[2])[...] = v\n",
           "", (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-every-frame-in-the-first-slot", "runtime/engines/processes/blocks.py",
           "                slot = self.slots[k][i]", "                slot = self.slots[0][i]", (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-slot-fits-anything", "runtime/engines/processes/blocks.py",
           "and (tuple(v.shape), v.dtype.str) == slot[:2]:", ":", (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-one-slot-shared-by-two-images", "runtime/engines/processes/blocks.py",
           "                if slot not in done.values() and slot is not None", "                if slot is not None",
           (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-spec-without-the-images", "runtime/engines/processes/blocks.py",
           "            spec = replace(spec, givens=tuple((*self.slotted[k], ",
           "            spec = replace(spec, givens=tuple((*(), ",
           (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-by-value-not-copied", "runtime/engines/processes/blocks.py",
           "(name, None, np.array(v, copy=True)))", "(name, None, v))", (T_BLOCKS, T_CHAIN)),
    Mutant("blocks-later-chunks-from-run-start", "runtime/engines/processes/scheduler.py",
           "            spec = chunk.block.spec_with(leading if chunk.before_given else None, givens)",
           "            spec = chunk.block.spec_with(None, givens)", (T_BLOCKS, T_CHAIN, T_PROC)),
]

# A batch's records: what a rerun trusts, what a folder is.
T_BATCH = "tests/test_batch_records.py"
BATCH = [
    Mutant("batch-key-ignores-the-pipeline-content", "tools/batch.py",
           "digest = hashlib.sha256(Path(pipeline).read_bytes())", "digest = hashlib.sha256(pipeline.encode())",
           (T_BATCH,)),
    Mutant("batch-key-ignores-weights", "tools/batch.py",
           'KEY_OPTIONS = ("pipeline", "entry", "mode", "weight", ', 'KEY_OPTIONS = ("pipeline", "entry", "mode", ',
           (T_BATCH,)),
    Mutant("batch-key-ignores-the-video-file", "tools/batch.py",
           'stamp = f"{info.st_size}:{info.st_mtime_ns}"', 'stamp = ""', (T_BATCH,)),
    Mutant("batch-non-zero-exit-recorded-done", "tools/batch.py",
           '        if rc and not error:\n            error = f"exit {rc}"', "        if False:\n            pass",
           (T_BATCH,)),
    Mutant("batch-manifest-unlocked", "tools/manifest.py", "            fcntl.flock(fd, fcntl.LOCK_EX)\n", "",
           (T_BATCH,)),
    Mutant("batch-folder-not-emptied", "tools/batch.py", "    for child in folder.iterdir():", "    for child in ():",
           (T_BATCH,)),
    Mutant("batch-folder-names-keep-dots", "tools/manifest.py", 'for c in stem).strip(".")', "for c in stem)",
           (T_BATCH,)),
    Mutant("batch-earlier-folders-not-taken", "tools/batch.py",
           'taken = {e["folder"].casefold() for e in entries.values()}', "taken = set()", (T_BATCH,)),
]

T_SHM = "tests/test_process_engine_shm.py"

# The engines where shared memory is short or the caller dies, and a frame source that fails part-way: each edit
# brings back a SIGBUS, an orphaned worker or results thrown away.
ENGINE_EDGES = [
    Mutant("shm-block-not-reserved", "runtime/engines/processes/blocks.py",
           "os.posix_fallocate(fd, 0, size)", "os.ftruncate(fd, size)", (T_SHM,)),
    Mutant("shm-run-need-unchecked", "runtime/engines/processes/blocks.py",
           "if (in_flight - len(fits)) * size > available():", "if False:", (T_SHM,)),
    Mutant("worker-outlives-its-caller", "runtime/engines/processes/pool.py",
           "    exit_with(caller)\n", "", (T_SHM,)),
    Mutant("source-error-raised-at-once", "runtime/pipeline.py",
           "                self.error = e\n                return\n", "                raise\n",
           ("tests/test_source_errors.py",)),
]

# Edits a mutation run over the engines, the compile options, cortex-run's steps, quantisation and Ray sessions
# found no test for (2026-11-28), each with the test written for it; the block-start edit was caught only by a
# crash of the test's process, now by a failure that names the array left in the block.
UNSEEN = [
    Mutant("prepass-runs-an-update-of-a-fresh-value", "runtime/engines/chunk_worker.py",
           "                    recurrent |= set(stage.result_keys)\n", "                    pass\n", (T_CHAIN,)),
    Mutant("detached-misses-the-block-start", "runtime/engines/processes/blocks.py",
           "if self.span[0] <= at < self.span[1]:", "if self.span[0] < at < self.span[1]:", (T_BLOCKS,)),
    Mutant("weights-without-a-mode-not-baked", "options.py",
           "return bool(self.specialize and (self.mode is not None or self.weights))",
           "return bool(self.specialize and self.mode is not None)", ("tests/test_compile_options.py",)),
    Mutant("report-reads-the-scene-as-the-gate", "tools/run_steps.py",
           "        gate = added >= len(EXPOSED)", "        gate = added > 0", ("tests/test_run_steps.py",)),
    Mutant("accumulator-bound-ignores-the-zero-point", "passes/quantize.py",
           "    bound = terms * span(x_zero_point) * w_span", "    bound = terms * Q_MAX * w_span",
           ("tests/test_quant_scales.py",)),
    Mutant("ray-session-ignores-worker-setup", "runtime/engines/ray.py",
           "        key = (program, workers, setup)", "        key = (program, workers)",
           ("tests/test_ray_engine.py::test_a_session_run_with_another_worker_setup_runs_it_in_new_actors",)),
]


# Written from the code's diffs (live sources, frame padding, multi-mode programs, the engines' loop and pools, the
# backend records, IREE's flags, the ONNX importer's windows, the batch's records) before reading their tests
# (2026-11-28): 27 of the 36 killed at first; each of the 9 that survived has a test now (the stream whose frame
# size changes, a reused frame buffer, a recompute counted as a frame, a missing weight of a shape-generic entry, an
# unrecorded BLAS fact, ConvTranspose's odd SAME padding, Resize to fractional sizes, a warned video rerun, a
# manifest line of unknown status).
T_LIVE = "tests/test_live_sources.py"
T_PAD = ("tests/test_pad_frames.py", "tests/test_block_padding.py", "tests/test_shape_generic.py")
T_MODES = ("tests/test_modes.py", "tests/test_modes_in_flight.py", "tests/test_cortex_run_modes.py")
T_FLIGHT = ("tests/test_frames_in_flight.py", "tests/test_frame_parallel.py")
T_PROCS = ("tests/test_process_engine.py", T_CHAIN, T_BLOCKS)
T_ONNX_OPS = ("tests/test_onnx_operators.py", "tests/test_onnx_frontend.py", "tests/test_pooling_pads.py",
          "tests/test_onnx_fuzz.py")
T_RECORDS = (T_BATCH, "tests/test_batch_out_dir.py", "tests/test_output_paths.py")
UNREAD = [
    Mutant("live-start-skips-one-more", "video/live.py", "if number < self.start:", "if number <= self.start:",
           (T_LIVE, "tests/test_live_ffmpeg.py")),
    Mutant("live-frames-limit-one-more", "video/live.py", "while self.limit is None or self.delivered < self.limit:",
           "while self.limit is None or self.delivered <= self.limit:", (T_LIVE, "tests/test_live_ffmpeg.py")),
    Mutant("live-size-change-unchecked", "video/live.py", "if frame.shape[:2] != self.size:", "if False:",
           (T_LIVE, "tests/test_live_ffmpeg.py")),
    Mutant("live-nothing-ahead-judged", "tools/live_run.py", "if ahead <= 0:\n            return 0.0",
           "if ahead < 0:\n            return 0.0", (T_LIVE, "tests/test_live_ffmpeg.py")),
    Mutant("live-percentile-rank-floored", "tools/live_run.py", "rank = max(1, math.ceil(q / 100 * self.count))",
           "rank = max(1, int(q / 100 * self.count))", (T_LIVE,)),
    Mutant("live-service-is-the-last-not-the-quantile", "tools/live_run.py",
           "self.service = sorted(self.recent)[int(SERVICE_QUANTILE * (len(self.recent) - 1))]",
           "self.service = self.recent[-1]", (T_LIVE,)),
    Mutant("live-dropped-count-not-reset", "tools/live_run.py",
           "                    pending = 0\n                    self.admitted += 1",
           "                    self.admitted += 1", (T_LIVE, "tests/test_live_ffmpeg.py")),
    Mutant("live-full-queue-admits", "tools/live_run.py",
           "        if len(self.queue) >= self.capacity:\n            return False\n", "", (T_LIVE,)),
    Mutant("pad-encoder-crops-to-the-padded-size", "passes/pad_frames.py",
           "size = tuple(pad.frame.type.get_shape()[:2])", "size = tuple(pad.result.type.get_shape()[:2])", T_PAD),
    Mutant("pad-scored-size-unpadded", "passes/pad_frames.py", "return padded.get_shape()[0], padded.get_shape()[1]",
           "return t.get_shape()[0], t.get_shape()[1]", T_PAD),
    Mutant("pad-exact-multiple-padded-a-block-more", "dialects/shapes.py", "-(-d // block) * block",
           "(d // block + 1) * block", T_PAD),
    Mutant("modes-written-state-stays-stale", "runtime/modes.py",
           "self._stale = (self._stale - self.writes[mode]) | missed", "self._stale = self._stale | missed", T_MODES),
    Mutant("modes-last-inputs-not-copied", "runtime/modes.py",
           "last = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in inputs)", "last = tuple(inputs)", T_MODES),
    Mutant("modes-schedule-read-past-its-end", "runtime/modes.py", "if index >= len(checked):",
           "if index > len(checked):", T_MODES),
    Mutant("modes-recompute-counted-in-the-profile", "runtime/modes.py", "                runner.profiling = False\n",
           "                pass\n", T_MODES),
    Mutant("modes-kept-state-not-live", "passes/mode_states.py", "    live = set(keep)\n", "    live = set()\n",
           (*T_MODES, "tests/test_compile_path.py")),
    Mutant("modes-keep-decisions-ignored", "driver.py",
           'keep = sorted(s for s, d in decisions.items() if d.decision == "keep")', "keep = []",
           (*T_MODES, "tests/test_compile_path.py")),
    Mutant("modes-in-flight-never-stale", "runtime/engines/threads.py",
           "left = self.variants.recompute - written.keys()", "left = frozenset()", ("tests/test_modes_in_flight.py",)),
    Mutant("modes-chunk-stale-never-recomputed", "runtime/engines/chunk_worker.py", "if worker.reads_stale(stale):",
           "if False:", ("tests/test_modes_in_flight.py",)),
    Mutant("modes-chunk-modes-dropped", "runtime/engines/processes/pool.py", "first, before_given, given, modes = args",
           "first, before_given, given, _ = args; modes = None", ("tests/test_modes_in_flight.py",)),
    Mutant("options-mode-named-twice-accepted", "options.py", "if modes.count(m) > 1", "if modes.count(m) > 2",
           ("tests/test_compile_options.py", "tests/test_modes.py")),
    Mutant("options-weights-of-an-uncompiled-mode-ignored", "options.py", "extra = sorted(set(weights) - set(modes))",
           "extra = []", ("tests/test_compile_options.py", "tests/test_modes.py")),
    Mutant("shape-generic-weights-checked-at-the-first-call", "driver.py",
           "check_weight_values(module, *one.weight_table())  # now, not at the first call", "pass",
           ("tests/test_shape_generic.py", "tests/test_compile_options.py")),
    Mutant("flight-window-one-more", "runtime/engines/flight.py",
           "while not exhausted and len(fronts) + len(tails) < window:",
           "while not exhausted and len(fronts) + len(tails) <= window:", T_FLIGHT),
    Mutant("flight-earlier-frames-lost-on-an-error", "runtime/engines/flight.py",
           "                    while tails:  # the items before the failing one still come out, then its error\n"
           "                        yield from executor.finish(tails.popleft())\n", "", T_FLIGHT),
    Mutant("processes-state-of-the-chunks-first-frame", "runtime/engines/processes/scheduler.py",
           "self.last = (chunk.states[k], result", "self.last = (chunk.states[0], result", T_PROCS),
    Mutant("processes-error-names-a-frame-too-many", "runtime/engines/processes/scheduler.py",
           'f"frames {first} to {first + count - 1}"', 'f"frames {first} to {first + count}"', T_PROCS),
    Mutant("record-unrecorded-blas-taken-as-absent", "backends/record.py",
           "exe.meta.get(CALLS_BLAS, True) is not False", "exe.meta.get(CALLS_BLAS, False) is True",
           ("tests/test_blas_hold.py", "tests/test_call_boundary.py", "tests/test_toy_backend.py")),
    Mutant("conv-tile-retiles-an-indivisible-dispatch", "backends/iree/conv_tile.py",
           "if root is None or int(root.group(1)) % channels:", "if root is None:", ("tests/test_iree_flags.py",)),
    Mutant("iree-data-tiling-off-unless-asked", "backends/iree/compiler.py",
           'if os.environ.get(DATA_TILING_ENV) == "0":', 'if os.environ.get(DATA_TILING_ENV) != "1":',
           ("tests/test_iree_flags.py",)),
    Mutant("onnx-transposed-same-upper-swapped", "frontends/onnx/upsampling.py",
           'begins.append(small if auto_pad == "SAME_UPPER" else big)',
           'begins.append(big if auto_pad == "SAME_UPPER" else small)', T_ONNX_OPS),
    Mutant("onnx-resize-size-rounded-up", "frontends/onnx/upsampling.py", "out = int(np.floor(n * float(g)))",
           "out = int(np.ceil(n * float(g)))", T_ONNX_OPS),
    Mutant("onnx-conv-transpose-flipped-in-height-only", "frontends/onnx/upsampling.py", "[..., ::-1, ::-1]",
           "[..., ::-1, :]", T_ONNX_OPS),
    Mutant("onnx-ceil-mode-keeps-a-window-in-the-padding", "frontends/onnx/windows.py", "if (out - 1) * s >= n + lo:",
           "if (out - 1) * s > n + lo:", T_ONNX_OPS),
    Mutant("batch-warned-video-run-again", "tools/batch.py", 'old["status"] in FINISHED', 'old["status"] == "done"',
           T_RECORDS),
    Mutant("batch-output-inside-another-accepted", "tools/batch.py", "if a[:len(b)] == b or b[:len(a)] == a:",
           "if a == b:", T_RECORDS),
    Mutant("batch-folder-on-disk-handed-out", "tools/manifest.py", " or os.path.lexists(out / candidate)", "",
           T_RECORDS),
    Mutant("batch-unknown-status-kept", "tools/manifest.py", 'if entry.get("status") not in STATUSES:', "if False:",
           T_RECORDS),
]

# Written from the diffs of the deprecated-name helper, the renamed runtime settings, the rewrite patterns,
# grouped channels-last convolutions, reductions before a transpose, ONNX Cast/Where, IREE data tiling and
# frames in flight across mode switches, before reading their tests.
T_RENAMED = ("tests/test_renamed.py", "tests/test_driver_names.py")
T_FUSION = ("tests/test_fusion_rewrites.py", "tests/test_pattern.py")
T_GROUPED = ("tests/test_layout_grouped.py", "tests/test_convert_layout.py")
T_REDUCE = ("tests/test_layout_reductions.py", "tests/test_convert_layout.py")
T_TYPED = ("tests/test_onnx_typed.py", "tests/test_onnx_operators.py")
T_SETTINGS = ("tests/test_iree_threads.py", "tests/test_renamed.py")
T_INFLIGHT = ("tests/test_modes_in_flight.py",)
BLIND = [
    Mutant("deprecation-function-warns-at-the-alias", "deprecation.py", "        warn_renamed(old, new.__name__)\n",
           "        warn_renamed(old, new.__name__, stacklevel=2)\n", T_RENAMED),
    Mutant("deprecation-renamed-attribute-silent", "deprecation.py",
           '        warn_renamed(f"{module}.{name}", f"{module}.{new}")\n', "", T_RENAMED),
    Mutant("deprecation-moved-module-forwards-dunders", "deprecation.py",
           'if name.startswith("__") or (names is not None and name not in names):',
           "if names is not None and name not in names:", T_RENAMED),
    Mutant("deprecation-moved-module-forwards-every-name", "deprecation.py",
           'if name.startswith("__") or (names is not None and name not in names):',
           'if name.startswith("__"):', T_RENAMED),
    Mutant("settings-profile-false-turns-profiling-on", "driver.py", "if profile is not OMITTED and profile:",
           "if profile is not OMITTED:", T_RENAMED),
    Mutant("settings-iree-threads-reload-drops-profiling", "runtime/pipeline.py",
           "        self._load()\n        if profiling:\n            self.profiling = True\n", "        self._load()\n",
           T_SETTINGS),
    Mutant("settings-mode-switch-iree-threads-default-mode-only", "runtime/modes.py",
           "        for runner in self.runners.values():\n            runner.iree_threads = n\n",
           "        self.runners[self.default_mode].iree_threads = n\n", T_SETTINGS),
    Mutant("settings-shape-generic-later-shape-default-threads", "shape_generic.py",
           "        if self._iree_threads is not None:\n            program.iree_threads = self._iree_threads\n", "",
           (*T_SETTINGS, "tests/test_shape_generic.py")),
    Mutant("settings-shape-generic-later-shape-one-stage-thread", "shape_generic.py",
           "        if self._stage_threads is not None:\n            program.stage_threads = self._stage_threads\n", "",
           ("tests/test_shape_generic.py", "tests/test_shape_generic_options.py", "tests/test_renamed.py")),
    Mutant("settings-iree-threads-not-handed-to-the-driver", "runtime/iree_executable.py",
           "cpu_driver(driver, THREADS.get())", "cpu_driver(driver)", T_SETTINGS),
    Mutant("runner-backend-reference-silent", "tools/run_args.py",
           "            print(f\"warning: {renamed_message('--backend reference', '--runner reference')}\", file=sys.stderr)\n",
           "", ("tests/test_renamed.py", "tests/test_cortex_run_ux.py", "tests/test_cortex_run.py")),
    Mutant("runner-make-backend-reference-unknown", "frame_runners.py",
           "make_runner(None if backend == REFERENCE else backend, *args, **kwargs)",
           "make_runner(backend, *args, **kwargs)", T_RENAMED),
    Mutant("batch-reference-key-changed", "tools/batch.py", '        options["backend"] = "reference"\n', "        pass\n",
           ("tests/test_batch_records.py",)),
    Mutant("options-replace-unknown-name-accepted", "options.py",
           "unknown = sorted(set(changes) - set(COMPILE_OPTION_NAMES))", "unknown: list[str] = []",
           ("tests/test_compile_options.py", "tests/test_option_bounds.py")),
    Mutant("options-replace-changed-pipeline-not-parsed", "options.py",
           "if before is not None and before[0] == spec:", "if before is not None:",
           ("tests/test_compile_options.py", "tests/test_option_bounds.py")),
    Mutant("options-replace-not-checked", "options.py",
           "        copy._check({name: (getattr(self, name), passes) for name, passes in self._parsed.items()})\n", "",
           ("tests/test_compile_options.py", "tests/test_option_bounds.py")),
    Mutant("fusion-gelu-variants-swapped", "passes/recognize_gelu.py",
           'RecognizeGelu(GELU_TANH, "tanh"), RecognizeGelu(GELU_ERF, "none")',
           'RecognizeGelu(GELU_TANH, "none"), RecognizeGelu(GELU_ERF, "tanh")', T_FUSION),
    Mutant("fusion-batch-norm-erases-others-dead-code", "passes/fuse_batch_norm.py",
           "GreedyRewritePatternApplier(list(FUSE_BATCH_NORM), dce_enabled=False)",
           "GreedyRewritePatternApplier(list(FUSE_BATCH_NORM))", T_FUSION),
    Mutant("grouped-two-groups-taken-as-depthwise", "lowering/layout.py",
           "if group > 1 and shape_of(op.weight)[2] > 1:", "if group > 2 and shape_of(op.weight)[2] > 1:", T_GROUPED),
    Mutant("grouped-depthwise-strides-swapped", "lowering/layout.py",
           "spatial = (d[0], d[1] * sh + d[-2] * dh, d[2] * sw + d[-1] * dw, d[3])",
           "spatial = (d[0], d[1] * sw + d[-2] * dh, d[2] * sh + d[-1] * dw, d[3])", T_GROUPED),
    Mutant("grouped-every-group-gets-the-first-bias", "lowering/layout.py",
           "init = b.broadcast(channels(b, op.bias, i * f, f), sizes, [0, 1, 2])",
           "init = b.broadcast(channels(b, op.bias, 0, f), sizes, [0, 1, 2])", T_GROUPED),
    Mutant("grouped-weight-columns-by-input-group", "lowering/layout.py",
           "channels(b, op.weight, i * f, f)", "channels(b, op.weight, i * cg, f)", T_GROUPED),
    Mutant("reduce-before-transpose-keepdims-ignored", "passes/convert_layout.py",
           "kept = perm if keep else tuple(perm[i] for i in range(rank) if i not in axes)",
           "kept = tuple(perm[i] for i in range(rank) if i not in axes)", T_REDUCE),
    Mutant("reduce-before-transpose-axes-not-permuted", "passes/convert_layout.py",
           "inner = type(op)(op.x.owner.x, sorted(perm[a] for a in axes), keep)",
           "inner = type(op)(op.x.owner.x, sorted(axes), keep)", T_REDUCE),
    Mutant("reduce-before-transpose-inverse-order", "passes/convert_layout.py",
           "order = inverse(inverse(kept))", "order = inverse(kept)", T_REDUCE),
    Mutant("onnx-cast-nan-to-bool-false", "lowering/tensor_ops.py", 'return s.cmpf(x, s.const(0.0, source), "une")',
           'return s.cmpf(x, s.const(0.0, source), "one")', T_TYPED),
    Mutant("onnx-cast-true-to-minus-one", "lowering/tensor_ops.py",
           "(arith.UIToFPOp(x, element) if isinstance(element, AnyFloat)",
           "(arith.SIToFPOp(x, element) if isinstance(element, AnyFloat)", T_TYPED),
    Mutant("onnx-cast-float-to-int-unsigned", "lowering/tensor_ops.py", "return arith.FPToSIOp(x, element).result",
           "return arith.FPToUIOp(x, element).result", T_TYPED),
    Mutant("onnx-where-branches-swapped", "lowering/tensor_ops.py", "b.elementwise(s.select, op.cond, op.x, op.y,",
           "b.elementwise(s.select, op.cond, op.y, op.x,", T_TYPED),
    Mutant("onnx-where-condition-shape-ignored", "dialects/tensor_elementwise.py",
           "shape = shapes.broadcast(shapes.broadcast(c.get_shape(), x.get_shape()), y.get_shape())",
           "shape = shapes.broadcast(x.get_shape(), y.get_shape())", T_TYPED),
    # Survives: an integer input read by Cast and by a float32 operator is refused at import either way; with
    # the edit the error names the operator that needs float32 (main's names the Cast, which takes int64).
    Mutant("onnx-typed-input-also-read-as-float", "frontends/onnx/table.py", "    return typed - other\n",
           "    return typed\n", T_TYPED),
    Mutant("onnx-non-float-value-reaches-a-float-operator", "frontends/onnx/graph.py", "            if element != f32:\n",
           "            if False:\n", T_TYPED),
    Mutant("onnx-unread-integer-input-dropped", "frontends/onnx/graph.py",
           "for info in unbound.values():  # an integer input no node reads", "for info in []:  # an integer input no node reads",
           (*T_TYPED, "tests/test_onnx_frontend.py")),
    Mutant("iree-data-tiling-dispatch-creation-path", "backends/iree/compiler.py",
           'DATA_TILING_FLAGS = ("--iree-global-opt-data-tiling",)', 'DATA_TILING_FLAGS = ("--iree-opt-data-tiling",)',
           ("tests/test_iree_flags.py",)),
    Mutant("inflight-stale-recomputed-by-the-last-writer", "runtime/engines/chunk_worker.py",
           "        for mode in self.modes:\n            writer = self.variant(mode)",
           "        for mode in reversed(self.modes):\n            writer = self.variant(mode)", T_INFLIGHT),
    Mutant("inflight-processes-before-mode-of-the-chunks-first-frame", "runtime/engines/processes/scheduler.py",
           "self.before_mode = mine[-1]", "self.before_mode = mine[0]", T_INFLIGHT),
    Mutant("inflight-processes-handed-back-in-the-first-frames-mode", "runtime/engines/processes/scheduler.py",
           "frame, chunk.at + k, modes[k])  # a consumer", "frame, chunk.at + k, modes[0])  # a consumer", T_INFLIGHT),
    Mutant("inflight-pool-chunk-modes-off-by-one", "runtime/engines/processes/pool.py",
           "chunk_modes = modes[1:] if modes is not None and before_given else modes", "chunk_modes = modes",
           T_INFLIGHT),
    Mutant("inflight-recurrence-of-the-first-variant", "runtime/engines/chunk_worker.py",
           "frame_split = splits[k] if splits is not None else split", "frame_split = split", T_INFLIGHT),
    Mutant("inflight-ray-before-mode-of-the-chunks-first-frame", "runtime/engines/ray.py",
           "before_mode, self.before_mode = self.before_mode, modes[-1]",
           "before_mode, self.before_mode = self.before_mode, modes[0]", ("tests/test_modes_in_flight_ray.py",)),
]



def listed_modules() -> list[list[Mutant]]:
    """The `MUTANTS` of every module in scripts/mutant_lists/, in file-name order."""
    folder = Path(__file__).resolve().parent / "mutant_lists"
    names = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))
    return [importlib.import_module(f"mutant_lists.{name}").MUTANTS for name in names]


MUTANTS: list[Mutant] = [*LIT_ONLY, *FRESH, *SURVIVORS, *SLIPS, *GAPS, *CHAIN, *PREPASS_BLOCKS, *BATCH, *ENGINE_EDGES,
                         *UNSEEN, *UNREAD, *BLIND, *(m for group in listed_modules() for m in group)]
