// Tensor sizes are bounded where they are read (dialects/shapes.py): a dense
// literal before xDSL expands it element by element (MAX_CONSTANT_ELEMENTS),
// any tensor a cortex op takes or makes (MAX_TENSOR_ELEMENTS).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @huge_splat() -> tensor<100000x100000xf32> {
  // expected-error@+1 {{a dense literal (100000x100000) has 10000000000 elements, more than the supported 16777216}}
  %c = cortex.constant dense<1.0> : tensor<100000x100000xf32>
  func.return %c : tensor<100000x100000xf32>
}

// -----

func.func @huge_dimension(%x: tensor<9200000000000000000xf32>) -> tensor<9200000000000000000xf32> {
  // expected-error@+1 {{'cortex.exp' op operand #0 (9200000000000000000) has 9200000000000000000 elements, more than the supported 1099511627776}}
  %y = cortex.exp %x : tensor<9200000000000000000xf32> -> tensor<9200000000000000000xf32>
  func.return %y : tensor<9200000000000000000xf32>
}

// -----

func.func @product_past_int64(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error@+1 {{'cortex.relu' op operand #0 (4294967296x4294967296) has 18446744073709551616 elements, more than the supported 1099511627776}}
  %y = cortex.relu %x : tensor<4294967296x4294967296xf32> -> tensor<4294967296x4294967296xf32>
  func.return %y : tensor<4294967296x4294967296xf32>
}
