// One case per verifier rule of the vision ops (dialects/vision.py and the
// image helpers of dialects/base.py and dialects/shapes.py).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @gray_frame_not_ui8(%f: tensor<64x64x3xf32>) {
  // expected-error@+1 {{'cortex.gray' op the frame must be a tensor<HxWx3xui8> (BGR), got tensor<64x64x3xf32>}}
  %g = cortex.gray %f : tensor<64x64x3xf32> -> tensor<64x64xf32>
  func.return
}

// -----

func.func @gray_frame_not_3_channels(%f: tensor<64x64x4xui8>) {
  // expected-error@+1 {{the frame must be a tensor<HxWx3xui8> (BGR), got tensor<64x64x4xui8>}}
  %g = cortex.gray %f : tensor<64x64x4xui8> -> tensor<64x64xf32>
  func.return
}

// -----

func.func @gray_frame_rank(%f: tensor<64x64xui8>) {
  // expected-error@+1 {{the frame must be a tensor<HxWx3xui8>}}
  %g = cortex.gray %f : tensor<64x64xui8> -> tensor<64x64xf32>
  func.return
}

// -----

func.func @gray_result_contradicts_inferred(%f: tensor<64x64x3xui8>) {
  // expected-error@+1 {{'cortex.gray' op result #0 has type tensor<32x64xf32>, but the operands imply tensor<64x64xf32>}}
  %g = cortex.gray %f : tensor<64x64x3xui8> -> tensor<32x64xf32>
  func.return
}

// -----

func.func @gray_operand_not_tensor(%f: f32) {
  // expected-error@+1 {{'cortex.gray' op operand 'frame' at position 0 does not verify}}
  %g = "cortex.gray"(%f) : (f32) -> tensor<64x64xf32>
  func.return
}

// -----

func.func @blur_detector_gray_not_2d(%g: tensor<64x64x3xf32>) {
  // expected-error@+1 {{'cortex.blur_detector' op the gray image must be a 2-D f32 tensor (H x W), got tensor<64x64x3xf32>}}
  %s = cortex.blur_detector %g : tensor<64x64x3xf32> -> f32
  func.return
}

// -----

func.func @blur_detector_gray_not_f32(%g: tensor<64x64xf16>) {
  // expected-error@+1 {{the gray image must be a 2-D f32 tensor (H x W), got tensor<64x64xf16>}}
  %s = cortex.blur_detector %g : tensor<64x64xf16> -> f32
  func.return
}

// -----

func.func @blur_detector_result_not_f32(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.blur_detector' op result 'result' at position 0 does not verify}}
  %s = "cortex.blur_detector"(%g) : (tensor<64x64xf32>) -> f64
  func.return
}

// -----

func.func @scene_change_shapes_differ(%g: tensor<64x64xf32>, %p: tensor<64x32xf32>) {
  // expected-error@+1 {{'cortex.scene_change' op gray and prev_gray must have the same shape, got tensor<64x64xf32> and tensor<64x32xf32>}}
  %s = cortex.scene_change %g, %p : (tensor<64x64xf32>, tensor<64x32xf32>) -> f32
  func.return
}

// -----

func.func @scene_change_prev_not_gray(%g: tensor<64x64xf32>, %p: tensor<64x64x3xui8>) {
  // expected-error@+1 {{prev_gray must be a 2-D f32 tensor (H x W), got tensor<64x64x3xui8>}}
  %s = cortex.scene_change %g, %p : (tensor<64x64xf32>, tensor<64x64x3xui8>) -> f32
  func.return
}

// -----

func.func @center_crop_h_not_multiple_of_block(%g: tensor<50x64xf32>) {
  // expected-error@+1 {{'cortex.center_crop' op image H=50 is not a multiple of block=32}}
  %m = cortex.center_crop %g : tensor<50x64xf32> -> tensor<1x2xf32>
  func.return
}

// -----

func.func @center_crop_w_not_multiple_of_block(%g: tensor<64x100xf32>) {
  // expected-error@+1 {{image W=100 is not a multiple of block=16}}
  %m = cortex.center_crop %g {block = 16 : i64} : tensor<64x100xf32> -> tensor<4x6xf32>
  func.return
}

// -----

func.func @center_crop_block_not_positive(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{property 'block' must be positive, got 0}}
  %m = cortex.center_crop %g {block = 0 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @center_crop_sigma_not_positive(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{property 'sigma' must be positive, got -0.5}}
  %m = cortex.center_crop %g {sigma = -0.5 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @center_crop_map_not_block_grid(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{result #0 has type tensor<4x4xf32>, but the operands imply tensor<2x2xf32>}}
  %m = cortex.center_crop %g : tensor<64x64xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @center_crop_block_wrong_type(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.center_crop' op property 'block' must be an i64 integer, e.g. `16 : i64`; got `3.000000e+00 : f32`}}
  %m = cortex.center_crop %g {block = 3.0 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @text_roi_min_area_above_max_area(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.text_roi' op min_area (500) must not exceed max_area (400)}}
  %m = cortex.text_roi %g {min_area = 500 : i64, max_area = 400 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @text_roi_delta_not_positive(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{property 'delta' must be positive, got 0}}
  %m = cortex.text_roi %g {delta = 0 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @text_roi_map_not_block_grid(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.text_roi' op result #0 has type tensor<2x3xf32>, but the operands imply tensor<2x2xf32>}}
  %m = cortex.text_roi %g : tensor<64x64xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @saliency_block_not_multiple_of_scale(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.saliency_dft' op block (32) must be a multiple of scale (5)}}
  %m = cortex.saliency_dft %g {scale = 5 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @saliency_scale_not_positive(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{property 'scale' must be positive, got 0}}
  %m = cortex.saliency_dft %g {scale = 0 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @saliency_map_not_block_grid(%g: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.saliency_dft' op result #0 has type tensor<4x4xf32>, but the operands imply tensor<2x2xf32>}}
  %m = cortex.saliency_dft %g : tensor<64x64xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @motion_map_shapes_differ(%g: tensor<64x64xf32>, %p: tensor<32x64xf32>) {
  // expected-error@+1 {{'cortex.motion_map' op gray and prev_gray must have the same shape}}
  %m = cortex.motion_map %g, %p : (tensor<64x64xf32>, tensor<32x64xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @motion_map_h_not_multiple_of_block(%g: tensor<40x64xf32>, %p: tensor<40x64xf32>) {
  // expected-error@+1 {{image H=40 is not a multiple of block=32}}
  %m = cortex.motion_map %g, %p : (tensor<40x64xf32>, tensor<40x64xf32>) -> tensor<1x2xf32>
  func.return
}

// -----

func.func @motion_map_not_block_grid(%g: tensor<64x64xf32>, %p: tensor<64x64xf32>) {
  // expected-error@+1 {{'cortex.motion_map' op result #0 has type tensor<2x1xf32>, but the operands imply tensor<2x2xf32>}}
  %m = cortex.motion_map %g, %p : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @score_fusion_no_terms() {
  // expected-error@+1 {{'cortex.score_fusion' op score_fusion needs at least one term}}
  %s = "cortex.score_fusion"() <{terms = [], operandSegmentSizes = array<i32: 0, 0>}> : () -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_count_mismatch(%m: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{'cortex.score_fusion' op score_fusion has 2 terms, 1 maps and 1 weights; the three counts must be equal}}
  %s = cortex.score_fusion(%m) weights(%w) {terms = ["center_crop", "text_roi"]} : tensor<2x2xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_weights_missing(%m: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{score_fusion has 2 terms, 2 maps and 1 weights}}
  %s = cortex.score_fusion(%m, %m) weights(%w) {terms = ["a", "b"]} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_maps_differ(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>, %w: f32) {
  // expected-error@+1 {{'cortex.score_fusion' op all maps must have one shape: map #1 is tensor<2x3xf32>, map #0 is tensor<2x2xf32>}}
  %s = cortex.score_fusion(%a, %b) weights(%w, %w) {terms = ["a", "b"]} : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_map_not_2d(%a: tensor<2x2xf32>, %b: tensor<4xf32>, %w: f32) {
  // expected-error@+1 {{map #1 must be a 2-D f32 tensor (H x W), got tensor<4xf32>}}
  %s = cortex.score_fusion(%a, %b) weights(%w, %w) {terms = ["a", "b"]} : tensor<2x2xf32>, tensor<4xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_result_contradicts_maps(%a: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{result #0 has type tensor<3x3xf32>, but the operands imply tensor<2x2xf32>}}
  %s = cortex.score_fusion(%a) weights(%w) {terms = ["a"]} : tensor<2x2xf32> -> tensor<3x3xf32>
  func.return
}

// -----

func.func @score_fusion_weight_not_f32(%a: tensor<2x2xf32>, %w: f64) {
  // expected-error@+1 {{'cortex.score_fusion' op operand 'weights' at position 1 does not verify}}
  %s = "cortex.score_fusion"(%a, %w) <{terms = ["a"], operandSegmentSizes = array<i32: 1, 1>}> : (tensor<2x2xf32>, f64) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_segments_do_not_add_up(%a: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{'cortex.score_fusion' op operand count (2) does not match with the total size (3) specified in attribute 'operandSegmentSizes'}}
  %s = "cortex.score_fusion"(%a, %w) <{terms = ["a"], operandSegmentSizes = array<i32: 1, 2>}> : (tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_segments_wrong_count(%a: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{'cortex.score_fusion' op expected 2 values in operandSegmentSizes, but got 3}}
  %s = "cortex.score_fusion"(%a, %w) <{terms = ["a"], operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @score_fusion_segments_missing(%a: tensor<2x2xf32>, %w: f32) {
  // expected-error@+1 {{'cortex.score_fusion' op Expected operandSegmentSizes}}
  %s = "cortex.score_fusion"(%a, %w) <{terms = ["a"]}> : (tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @temporal_smooth_alpha_above_one(%s: tensor<2x2xf32>, %p: tensor<2x2xf32>, %c: f32) {
  // expected-error@+1 {{'cortex.temporal_smooth' op alpha must lie in [0, 1], got 1.5}}
  %r = cortex.temporal_smooth %s, %p, %c {alpha = 1.5 : f32} : (tensor<2x2xf32>, tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @temporal_smooth_alpha_negative(%s: tensor<2x2xf32>, %p: tensor<2x2xf32>, %c: f32) {
  // expected-error@+1 {{alpha must lie in [0, 1], got -0.25}}
  %r = cortex.temporal_smooth %s, %p, %c {alpha = -0.25 : f32} : (tensor<2x2xf32>, tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @temporal_smooth_shapes_differ(%s: tensor<2x2xf32>, %p: tensor<2x3xf32>, %c: f32) {
  // expected-error@+1 {{score and prev_score must have the same shape, got tensor<2x2xf32> and tensor<2x3xf32>}}
  %r = cortex.temporal_smooth %s, %p, %c : (tensor<2x2xf32>, tensor<2x3xf32>, f32) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @temporal_smooth_score_not_2d(%s: tensor<4xf32>, %p: tensor<4xf32>, %c: f32) {
  // expected-error@+1 {{score must be a 2-D f32 tensor (H x W), got tensor<4xf32>}}
  %r = cortex.temporal_smooth %s, %p, %c : (tensor<4xf32>, tensor<4xf32>, f32) -> tensor<4xf32>
  func.return
}

// -----

func.func @temporal_smooth_scene_not_f32(%s: tensor<2x2xf32>, %p: tensor<2x2xf32>, %c: tensor<f32>) {
  // expected-error@+1 {{'cortex.temporal_smooth' op operand 'scene' at position 2 does not verify}}
  %r = "cortex.temporal_smooth"(%s, %p, %c) <{alpha = 0.5 : f32, reset_threshold = 0.5 : f32}> : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @encoder_quality_above_100(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{'cortex.encoder' op quality must lie in [0, 100], got 101}}
  %b = cortex.encoder %f, %s {quality = 101 : i64} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_quality_negative(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{quality must lie in [0, 100], got -1}}
  %b = cortex.encoder %f, %s {quality = -1 : i64} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_score_not_block_grid(%f: tensor<64x64x3xui8>, %s: tensor<4x4xf32>) {
  // expected-error@+1 {{'cortex.encoder' op score must cover the block grid of the frame (tensor<2x2xf32>), got tensor<4x4xf32>}}
  %b = cortex.encoder %f, %s : (tensor<64x64x3xui8>, tensor<4x4xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_frame_not_ui8(%f: tensor<64x64x3xf32>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{the frame must be a tensor<HxWx3xui8> (BGR), got tensor<64x64x3xf32>}}
  %b = cortex.encoder %f, %s : (tensor<64x64x3xf32>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_block_not_positive(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{property 'block' must be positive, got -32}}
  %b = cortex.encoder %f, %s {block = -32 : i64} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_result_not_bytes(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{'cortex.encoder' op result #0 has type tensor<?xf32>, but the operands imply tensor<?xui8>}}
  %b = cortex.encoder %f, %s : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @encoder_crop_larger_than_frame(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{'cortex.encoder' op crop must be (height, width) within the 64x64 frame, got [64, 65]}}
  %b = cortex.encoder %f, %s {crop = array<i64: 64, 65>} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}

// -----

func.func @encoder_crop_not_two_sizes(%f: tensor<64x64x3xui8>, %s: tensor<2x2xf32>) {
  // expected-error@+1 {{'cortex.encoder' op crop must be (height, width) within the 64x64 frame, got [60]}}
  %b = cortex.encoder %f, %s {crop = array<i64: 60>} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return
}
