// The L2 pipeline through the NumPy backend: one Python function whose
// statements name the cortex op they came from; constants hoisted to module
// level (built once), externs bound at load; the blur gate is a Python `if`;
// no per-element loop anywhere; a large temporary is released (`del`) where it dies.
// RUN: cortex-opt %l2_static -p convert-cortex-to-linalg,convert-cortex-to-extern -t numpy | filecheck %s

// CHECK:      from cortex.runtime import numpy_support as _rt
// CHECK:      _BLOBS = {
// CHECK:      # constants: built once, when the module loads
// CHECK-NEXT: _k_gray = _rt.array([0.11400000005960464, 0.5870000123977661, 0.29899999499320984], 'float32', (3,))  # gray
// CHECK:      _k_sharpness_median = _rt.const(_BLOBS['_k_sharpness_median'], 'float32', (25,))  # sharpness_median
// CHECK:      _k_center = _rt.const(_BLOBS['_k_center'], 'float32', (15, 20))  # center
// CHECK:      # externs: kernels from the runtime's extern table, bound when the module loads
// CHECK-NEXT: _x_cortex_blur_detector = _extern('cortex.blur_detector', {})  # @cortex_blur_detector
// CHECK-NEXT: _x_cortex_scene_change = _extern('cortex.scene_change', {})  # @cortex_scene_change
// CHECK-NEXT: _x_cortex_text_roi = _extern('cortex.text_roi', {'block': 32, 'delta': 5, 'min_area': 60, 'max_area': 14400})  # @cortex_text_roi
// CHECK-NEXT: _x_cortex_encoder = _extern('cortex.encoder', {'block': 32, 'threshold': 0.5, 'quality': 85})  # @cortex_encoder

// CHECK-LABEL: def l2_frame(frame, prev_gray, prev_score, sharpness_history, blur_threshold, blur_fraction, wc, wt, ws, wm):
// CHECK-NOT:   for
// CHECK:         _t1 = frame.view(np.uint8).astype(np.float32)  # gray: linalg.generic
// CHECK-NEXT:    gray = _t1 @ _k_gray  # gray: linalg.generic
// CHECK-NEXT:    del _t1  # gray: linalg.generic
// CHECK-NEXT:    sharpness = _x_cortex_blur_detector(gray)  # sharpness: func.call
// CHECK-NEXT:    sharpness = np.float32(sharpness)  # sharpness: func.call
// CHECK:         sharpness_median = v_{{[0-9]+}}[()]  # sharpness_median: tensor.extract
// CHECK-NEXT:    relative_threshold = blur_fraction * sharpness_median  # l2_frame: arith.mulf
// CHECK-NEXT:    threshold = np.float32(np.maximum(blur_threshold, relative_threshold))  # l2_frame: arith.maximumf
// CHECK-NEXT:    blurred = sharpness < threshold  # l2_frame: arith.cmpf
// CHECK-NEXT:    if blurred:  # l2_frame: scf.if
// CHECK-NEXT:        score = prev_score  # l2_frame: scf.yield
// CHECK-NEXT:    else:  # l2_frame: scf.if
// CHECK:             text = _x_cortex_text_roi(gray)  # text: func.call
// CHECK:             = np.sum({{.*}}, axis=1) @ _k_ones8  # saliency: linalg.reduce
// CHECK:             = _k_saliency @ {{.*}}  # saliency: linalg.matmul
// CHECK:             saliency = np.multiply({{.*}}, 0.0625, out={{.*}})  # saliency: linalg.generic
// CHECK:             _t{{[0-9]+}} = np.subtract(gray, prev_gray, out=_pool.take((480, 640), 'float32'))  # motion: linalg.generic
// CHECK:             del _t{{[0-9]+}}  # motion: linalg.generic
// CHECK:             motion = np.multiply(
// CHECK:             _t{{[0-9]+}} = _k_center * wc  # fused: linalg.generic
// CHECK:             smoothed = np.where(
// CHECK-NEXT:        score = smoothed  # l2_frame: scf.yield
// CHECK:         new_history[24] = sharpness  # new_history: tensor.insert
// CHECK-NEXT:    encoded = _x_cortex_encoder(frame.view(np.uint8), score)  # encoded: func.call
// CHECK-NEXT:    encoded = encoded.view(np.int8)  # encoded: func.call
// CHECK-NEXT:    return (encoded, score, gray, score, new_history)  # l2_frame: func.return
// CHECK-NOT:   for
