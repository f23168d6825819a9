// Every vision op round-trips: the custom form re-parses to itself, and the
// generic form (properties in <{...}>, defaults spelled out) re-parses to the
// same IR.
// RUN: cortex-opt %s > %t.custom
// RUN: filecheck %s --input-file %t.custom
// RUN: cortex-opt %t.custom | diff %t.custom -
// RUN: cortex-opt %s --print-op-generic > %t.generic
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic
// RUN: cortex-opt %t.generic | diff %t.custom -

func.func @vision(%frame: tensor<64x96x3xui8>, %prev: tensor<64x96xf32>, %prev_score: tensor<4x6xf32>, %w: f32) -> (tensor<?xui8>, tensor<4x6xf32>) {
  %gray = cortex.gray %frame : tensor<64x96x3xui8> -> tensor<64x96xf32>
  %sharp = cortex.blur_detector %gray : tensor<64x96xf32> -> f32
  %scene = cortex.scene_change %gray, %prev : (tensor<64x96xf32>, tensor<64x96xf32>) -> f32
  %center = cortex.center_crop %gray {block = 16 : i64, sigma = 0.25 : f32} : tensor<64x96xf32> -> tensor<4x6xf32>
  %center_default = cortex.center_crop %gray {block = 16 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  %text = cortex.text_roi %gray {block = 16 : i64, delta = 3 : i64, min_area = 10 : i64, max_area = 200 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  %sal = cortex.saliency_dft %gray {block = 16 : i64, scale = 4 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  %motion = cortex.motion_map %gray, %prev {block = 16 : i64} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
  %fused = cortex.score_fusion(%center, %text) weights(%w, %w) {terms = ["center_crop", "text_roi"]} : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %smooth = cortex.temporal_smooth %fused, %prev_score, %scene {alpha = 0.75 : f32, reset_threshold = 0.4 : f32} : (tensor<4x6xf32>, tensor<4x6xf32>, f32) -> tensor<4x6xf32>
  %bytes = cortex.encoder %frame, %smooth {block = 16 : i64, threshold = 0.25 : f32, quality = 70 : i64} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  %cropped = cortex.encoder %frame, %smooth {block = 16 : i64, crop = array<i64: 60, 90>} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  func.return %bytes, %smooth : tensor<?xui8>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @vision
// CHECK-NEXT:    %gray = cortex.gray %frame : tensor<64x96x3xui8> -> tensor<64x96xf32>
// CHECK-NEXT:    %sharp = cortex.blur_detector %gray : tensor<64x96xf32> -> f32
// CHECK-NEXT:    %scene = cortex.scene_change %gray, %prev : (tensor<64x96xf32>, tensor<64x96xf32>) -> f32
// CHECK-NEXT:    %center = cortex.center_crop %gray {block = 16 : i64, sigma = 2.500000e-01 : f32} : tensor<64x96xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %center_default = cortex.center_crop %gray {block = 16 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %text = cortex.text_roi %gray {block = 16 : i64, delta = 3 : i64, min_area = 10 : i64, max_area = 200 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %sal = cortex.saliency_dft %gray {block = 16 : i64, scale = 4 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %motion = cortex.motion_map %gray, %prev {block = 16 : i64} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %fused = cortex.score_fusion(%center, %text) weights(%w, %w) {terms = ["center_crop", "text_roi"]} : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %smooth = cortex.temporal_smooth %fused, %prev_score, %scene {alpha = 7.500000e-01 : f32, reset_threshold = 4.000000e-01 : f32} : (tensor<4x6xf32>, tensor<4x6xf32>, f32) -> tensor<4x6xf32>
// CHECK-NEXT:    %bytes = cortex.encoder %frame, %smooth {block = 16 : i64, threshold = 2.500000e-01 : f32, quality = 70 : i64} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
// CHECK-NEXT:    %cropped = cortex.encoder %frame, %smooth {block = 16 : i64, crop = array<i64: 60, 90>} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
// CHECK-NEXT:    func.return %bytes, %smooth

// GENERIC:      %gray = "cortex.gray"(%frame) : (tensor<64x96x3xui8>) -> tensor<64x96xf32>
// GENERIC-NEXT: %sharp = "cortex.blur_detector"(%gray) : (tensor<64x96xf32>) -> f32
// GENERIC-NEXT: %scene = "cortex.scene_change"(%gray, %prev) : (tensor<64x96xf32>, tensor<64x96xf32>) -> f32
// GENERIC-NEXT: %center = "cortex.center_crop"(%gray) <{block = 16 : i64, sigma = 2.500000e-01 : f32}>
// GENERIC-NEXT: %center_default = "cortex.center_crop"(%gray) <{block = 16 : i64, sigma = 3.000000e-01 : f32}>
// GENERIC-NEXT: %text = "cortex.text_roi"(%gray) <{block = 16 : i64, delta = 3 : i64, min_area = 10 : i64, max_area = 200 : i64}>
// GENERIC-NEXT: %sal = "cortex.saliency_dft"(%gray) <{block = 16 : i64, scale = 4 : i64}>
// GENERIC-NEXT: %motion = "cortex.motion_map"(%gray, %prev) <{block = 16 : i64}>
// GENERIC-NEXT: %fused = "cortex.score_fusion"(%center, %text, %w, %w) <{terms = ["center_crop", "text_roi"], operandSegmentSizes = array<i32: 2, 2>}>
// GENERIC-NEXT: %smooth = "cortex.temporal_smooth"(%fused, %prev_score, %scene) <{alpha = 7.500000e-01 : f32, reset_threshold = 4.000000e-01 : f32}>
// GENERIC-NEXT: %bytes = "cortex.encoder"(%frame, %smooth) <{block = 16 : i64, threshold = 2.500000e-01 : f32, quality = 70 : i64}>
// GENERIC-NEXT: %cropped = "cortex.encoder"(%frame, %smooth) <{block = 16 : i64, crop = array<i64: 60, 90>, threshold = 5.000000e-01 : f32, quality = 85 : i64}>
