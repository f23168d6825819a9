// cortex-profile runs the reference interpreter over synthetic frames and
// records each cortex op's median time as cortex.profile_ms (f64, ms);
// non-cortex ops get nothing. The values vary from run to run: only their
// presence and type are checked.
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=2}' | filecheck %s
// RUN: cortex-opt %s -p 'cortex-profile{frames=2}' | filecheck %s --check-prefix=GRAPH
// RUN: cortex-opt %s -p 'cortex-profile{frames=1 entry=graph seed=7}' | filecheck %s --check-prefix=GRAPH
// RUN: not cortex-opt %l2_static -p 'cortex-profile{entry=nope}' 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not cortex-opt %l2_static -p 'cortex-profile{mode=turbo}' 2>&1 | filecheck %s --check-prefix=MODE
// The bundled pipeline is shape-generic: profiled on a copy bound to 480x640 (or size=HxW, padded to the block
// grid in IR where a side is no multiple of it), the times land on its own ops, which keep their dynamic types
// (the README's examples run on it).
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{frames=1}' | filecheck %s --check-prefix=GENERIC
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{frames=1 size=96x128}' | filecheck %s --check-prefix=GENERIC
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{frames=1 size=96x100}' | filecheck %s --check-prefix=GENERIC
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{size=big}' 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not cortex-opt %l2_static -p 'cortex-profile{size=96x128}' 2>&1 | filecheck %s --check-prefix=STATIC

// CHECK:      %gray = cortex.gray %frame {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %prev_gray = cortex.state "prev_gray" {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %sharpness = cortex.blur_detector %gray {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK-NEXT: %blur_threshold = cortex.weight "blur_threshold" {cortex.profile_ms = {{[0-9.e+-]+}} : f64} : f32
// CHECK:      %sharpness_median = cortex.window_median %sharpness_history {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK-NEXT: %relative_threshold = arith.mulf %blur_fraction, %sharpness_median : f32{{$}}
// CHECK-NEXT: %threshold = arith.maximumf %blur_threshold, %relative_threshold : f32{{$}}
// CHECK-NEXT: %blurred = arith.cmpf olt, %sharpness, %threshold : f32{{$}}
// CHECK:      %scene = cortex.scene_change %gray, %prev_gray {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %saliency = cortex.saliency_dft %gray {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %motion = cortex.motion_map %gray, %prev_gray {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %fused = cortex.score_fusion({{.*}}) weights({{.*}}) {cortex.profile_ms = {{[0-9.e+-]+}} : f64, terms = ["center_crop", "text_roi", "saliency_dft", "motion_map"]}
// CHECK:      %smoothed = cortex.temporal_smooth {{.*}} {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      cortex.update_state "prev_score" = %score {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// CHECK:      %encoded = cortex.encoder %frame, %score {cortex.profile_ms = {{[0-9.e+-]+}} : f64}

// A tensor graph: seeded random inputs of the argument types; with no
// @l2_frame, the module's only public function is the entry.
func.func @graph(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %m = cortex.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = cortex.relu %m : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// GRAPH:      %m = cortex.matmul %x, %w {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// GRAPH-NEXT: %r = cortex.relu %m {cortex.profile_ms = {{[0-9.e+-]+}} : f64}

// GENERIC:      %gray = cortex.gray %frame {cortex.profile_ms = {{[0-9.e+-]+}} : f64} : tensor<?x?x3xui8> -> tensor<?x?xf32>
// GENERIC:      %text = cortex.text_roi %gray {cortex.profile_ms = {{[0-9.e+-]+}} : f64} : tensor<?x?xf32> -> tensor<?x?xf32>
// GENERIC:      %encoded = cortex.encoder %frame, %score {cortex.profile_ms = {{[0-9.e+-]+}} : f64}
// SIZE: error: pass 'cortex-profile' failed: size reads like 480x640, got 'big'
// STATIC: size=96x128 is for a shape-generic frame entry; @l2_frame takes tensor<480x640x3xui8>

// ENTRY: no function '@nope' in the module (functions: l2_frame)
// MODE: unknown mode 'turbo'
