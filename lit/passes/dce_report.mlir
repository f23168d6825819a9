// cortex-dce reports, as `[dead_node_elimination]` lines, what it removed and the time
// that saves, from the cortex.profile_ms attributes cortex-profile sets.
// RUN: cortex-opt %s -p 'cortex-dce{mode=power_save}' 2>&1 >/dev/null | filecheck %s --check-prefix=PROFILED
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-dce{mode=power_save}' 2>&1 >/dev/null | filecheck %s --check-prefix=UNPROFILED
// RUN: cortex-opt %s -p 'cortex-dce{mode=balanced}' 2>&1 >/dev/null | filecheck %s --check-prefix=NOTHING --allow-empty
// RUN: not cortex-opt %s -p 'cortex-dce{mode=turbo}' 2>&1 | filecheck %s --check-prefix=BADMODE

// PROFILED:      [dead_node_elimination] removed: ['saliency_dft', 'motion_map']
// PROFILED-NEXT: [dead_node_elimination] saved: ~4.5ms
// UNPROFILED:      [dead_node_elimination] removed: ['saliency_dft', 'motion_map']
// UNPROFILED-NEXT: [dead_node_elimination] saved: ~0.0ms (no profile data)
// NOTHING-NOT:   dead_node_elimination
// BADMODE:       error: {{.*}}unknown mode 'turbo'

func.func @scores(%gray: tensor<64x64xf32>, %prev: tensor<64x64xf32>) -> tensor<2x2xf32> {
  %center = cortex.center_crop %gray {cortex.profile_ms = 0.8 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  %text = cortex.text_roi %gray {cortex.profile_ms = 35.2 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  %saliency = cortex.saliency_dft %gray {cortex.profile_ms = 3.1 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  %motion = cortex.motion_map %gray, %prev {cortex.profile_ms = 1.4 : f32} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x2xf32>
  %wc = cortex.weight "wc" : f32
  %wt = cortex.weight "wt" : f32
  %ws = cortex.weight "ws" : f32
  %wm = cortex.weight "wm" : f32
  %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm) {terms = ["center_crop", "text_roi", "saliency_dft", "motion_map"]} : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  func.return %fused : tensor<2x2xf32>
}
