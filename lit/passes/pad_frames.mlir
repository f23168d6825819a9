// cortex-pad-frames: a shape-generic entry bound to frames of any H x W. Where a side is no multiple of the
// block, a cortex.pad_frame edge-replicates the frame to the next multiples, every op reads the padded frame,
// and the encoder crops back to H x W; then cortex-specialize-shapes infers one score cell per started block.
// A size that is already on the grid only binds the frame argument; running the pass twice changes nothing.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=240x330}' | filecheck %s
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=240x330},cortex-specialize-shapes{shapes=240x330x3}' | filecheck %s --check-prefix=BOUND
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=33x47},cortex-specialize-shapes{shapes=33x47x3}' | filecheck %s --check-prefix=TINY
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=96x128}' | filecheck %s --check-prefix=EXACT
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=240x330}' > %t.once
// RUN: cortex-opt %t.once -p 'cortex-pad-frames{size=240x330}' | diff %t.once -
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-pad-frames{size=1x2x3}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not cortex-opt %t.once -p 'cortex-pad-frames{size=480x640}' 2>&1 | filecheck %s --check-prefix=OTHER

// CHECK:      func.func @l2_frame(%frame: tensor<240x330x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>)
// CHECK-NEXT:   %padded = cortex.pad_frame %frame : tensor<240x330x3xui8> -> tensor<256x352x3xui8>
// CHECK-NEXT:   %gray = cortex.gray %padded : tensor<256x352x3xui8> -> tensor<?x?xf32>
// CHECK-NOT:    cortex.pad_frame
// CHECK:        cortex.encoder %padded, %score {crop = array<i64: 240, 330>} : (tensor<256x352x3xui8>, tensor<?x?xf32>) -> tensor<?xui8>

// BOUND:      func.func @l2_frame(%frame: tensor<240x330x3xui8>) -> (tensor<?xui8>, tensor<8x11xf32>)
// BOUND-NEXT:   %padded = cortex.pad_frame %frame : tensor<240x330x3xui8> -> tensor<256x352x3xui8>
// BOUND-NEXT:   %gray = cortex.gray %padded : tensor<256x352x3xui8> -> tensor<256x352xf32>
// BOUND:        cortex.state "prev_score" : tensor<8x11xf32>
// BOUND:        cortex.encoder %padded, %score {crop = array<i64: 240, 330>} : (tensor<256x352x3xui8>, tensor<8x11xf32>) -> tensor<?xui8>

// TINY:       func.func @l2_frame(%frame: tensor<33x47x3xui8>) -> (tensor<?xui8>, tensor<2x2xf32>)
// TINY-NEXT:    %padded = cortex.pad_frame %frame : tensor<33x47x3xui8> -> tensor<64x64x3xui8>
// TINY:         cortex.encoder %padded, %score {crop = array<i64: 33, 47>}

// EXACT:      func.func @l2_frame(%frame: tensor<96x128x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>)
// EXACT-NOT:  cortex.pad_frame
// EXACT-NOT:  crop = array
// EXACT:      cortex.encoder %frame

// BAD: cortex-pad-frames' size reads like 480x640 (frame height x width), got '1x2x3'

// OTHER: @l2_frame takes tensor<240x330x3xui8> frames; frames of 480x640 do not fit it
