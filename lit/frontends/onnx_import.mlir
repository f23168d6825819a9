// The ONNX frontend: cortex-opt reads a .onnx model by its extension (and
// cortex-import-onnx prints the same IR); the model lowers to IR mlir-opt verifies.
// RUN: %python -m cortex.frontends.onnx_models cnn %t.onnx
// RUN: cortex-opt %t.onnx | filecheck %s
// RUN: %python -m cortex.tools.import_onnx %t.onnx | filecheck %s
// RUN: cortex-opt %t.onnx -p convert-cortex-to-linalg,convert-cortex-to-extern | filecheck %s --check-prefix=LOWERED
// RUN: %python -m cortex.frontends.onnx_models mlp %t.mlp.onnx
// RUN: cortex-opt %t.mlp.onnx | filecheck %s --check-prefix=MLP
// RUN: %python %S/Inputs/grouped_conv.py %t.dw.onnx
// RUN: cortex-opt %t.dw.onnx | filecheck %s --check-prefix=GROUP
// RUN: %python %S/Inputs/crop_resize.py %t.crop.onnx
// RUN: not cortex-opt %t.crop.onnx 2>&1 | filecheck %s --check-prefix=REFUSED
// RUN: not %python -m cortex.tools.import_onnx %t.crop.onnx 2>&1 | filecheck %s --check-prefix=REFUSED

// CHECK:      func.func @main(%x: tensor<1x3x16x16xf32>) -> tensor<1x10xf32> {
// CHECK:        %w1 = cortex.constant dense<
// CHECK:        %c1 = cortex.conv2d %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:   %r1 = cortex.relu %c1
// CHECK:        %c2 = cortex.conv2d %r1, %w2, %b2
// CHECK-NEXT:   %r2 = cortex.relu %c2
// CHECK-NEXT:   %p = cortex.max_pool %r2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x16x16xf32> -> tensor<1x8x8x8xf32>
// CHECK:        %flat = cortex.reshape %r3 : tensor<1x16x8x8xf32> -> tensor<1x1024xf32>
// CHECK:        %logits = cortex.linear %flat, %fc_w, %fc_b
// CHECK-NEXT:   %y = cortex.softmax %logits
// CHECK-NEXT:   func.return %y : tensor<1x10xf32>

// LOWERED-NOT:  cortex.conv2d
// LOWERED:      linalg.conv_2d_nchw_fchw
// LOWERED:      linalg.matmul

// MLP:      func.func @main(%x: tensor<1x64xf32>) -> tensor<1x10xf32> {
// MLP-COUNT-3: cortex.linear
// MLP:      cortex.softmax

// GROUP: %y = cortex.conv2d %x, %w {group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>

// REFUSED: error: onnx node 'crop' (Resize), attribute 'coordinate_transformation_mode' = 'tf_crop_and_resize': tf_crop_and_resize (extrapolation outside the box) is not supported
// REFUSED-NOT: Traceback
