// --view-graph prints the stage table: one row per stage in program order,
// [compilable] / [external_call], the profiled time, and the total. After
// cortex-partition the same stages are listed, with the piece holding each.
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=1}' --view-graph | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=1},cortex-partition' --view-graph | filecheck %s --check-prefix=PIECES
// RUN: cortex-opt %l2_static --view-graph | filecheck %s --check-prefix=UNPROFILED

// CHECK:      Cortex Graph IR  @l2_frame
// CHECK:      [compilable]     gray                 %gray            ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [external_call]  blur_detector        %sharpness       ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     window_median        %sharpness_median    ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [external_call]  scene_change         %scene           ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     center_crop          %center          ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [external_call]  text_roi             %text            ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     saliency_dft         %saliency        ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     motion_map           %motion          ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     score_fusion         %fused           ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     temporal_smooth      %smoothed        ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [compilable]     window_push          %new_history      ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK-NEXT: [external_call]  encoder              %encoded         ({{ *[0-9]+\.[0-9][0-9]}}ms)
// CHECK:      Total: {{[0-9]+\.[0-9][0-9]}}ms  (compilable {{[0-9.]+}}ms, external_call {{[0-9.]+}}ms, 12 stages)

// PIECES:      [compilable]     gray {{.*}}  in @l2_frame_compiled_0
// PIECES-NEXT: [external_call]  blur_detector {{.*}}ms){{$}}
// PIECES-NEXT: [compilable]     window_median {{.*}}  in @l2_frame_compiled_1
// PIECES-NEXT: [external_call]  scene_change {{.*}}ms){{$}}
// PIECES-NEXT: [external_call]  text_roi {{.*}}ms){{$}}
// PIECES-NEXT: [compilable]     center_crop {{.*}}  in @l2_frame_compiled_2
// PIECES:      [compilable]     temporal_smooth {{.*}}  in @l2_frame_compiled_2
// PIECES-NEXT: [compilable]     window_push {{.*}}  in @l2_frame_compiled_3
// PIECES-NEXT: [external_call]  encoder {{.*}}ms){{$}}

// UNPROFILED-NOT: ms)
// UNPROFILED:     [compilable]     saliency_dft         %saliency{{$}}
// UNPROFILED-NOT: ms)
// UNPROFILED:     12 stages, not profiled: -p 'cortex-profile{frames=N}' measures each stage's time
