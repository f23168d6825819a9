func.func @not_a_frame(%g: tensor<60x90xf32>) {
  // expected-error@+1 {{the frame must be a tensor<HxWx3xui8> (BGR), got tensor<60x90xf32>}}
  %p = cortex.pad_frame %g : tensor<60x90xf32> -> tensor<64x96xf32>
  func.return
}

// -----

func.func @block_not_positive(%f: tensor<60x90x3xui8>) {
  // expected-error@+1 {{property 'block' must be positive, got 0}}
  %p = cortex.pad_frame %f {block = 0 : i64} : tensor<60x90x3xui8> -> tensor<64x96x3xui8>
  func.return
}

// -----

func.func @result_not_the_next_multiples(%f: tensor<60x90x3xui8>) {
  // expected-error@+1 {{tensor<64x96x3xui8>}}
  %p = cortex.pad_frame %f {block = 16 : i64} : tensor<60x90x3xui8> -> tensor<60x90x3xui8>
  func.return
}
