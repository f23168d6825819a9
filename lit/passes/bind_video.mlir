// cortex-bind-video: a shape-generic entry bound to a video's frames (what cortex-run does before it
// compiles): the frame argument becomes the padded size, and where the frames are padded every encoder
// crops back to the video's own size; a size that is not HxW is one error naming the option.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-bind-video{size=100x130 padded=128x160}' | filecheck %s
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-bind-video{size=96x128}' | filecheck %s --check-prefix=EXACT
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-bind-video{size=1x2x3}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:      func.func @l2_frame(%frame: tensor<128x160x3xui8>) -> (tensor<?xui8>, tensor<4x5xf32>)
// CHECK:        cortex.encoder {{.*}}crop = array<i64: 100, 130>{{.*}} : (tensor<128x160x3xui8>, tensor<4x5xf32>) -> tensor<?xui8>

// EXACT:      func.func @l2_frame(%frame: tensor<96x128x3xui8>) -> (tensor<?xui8>, tensor<3x4xf32>)
// EXACT-NOT:  crop = array
// EXACT:      cortex.encoder

// BAD: cortex-bind-video's size reads like 480x640 (frame height x width), got '1x2x3'
