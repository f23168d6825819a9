// cortex.pad_frame round-trips (custom and generic forms) and each of its verifier rules is one error.
// RUN: cortex-opt %s --split-input-file | filecheck %s
// RUN: cortex-opt %s --split-input-file --print-op-generic | cortex-opt --split-input-file | filecheck %s
// RUN: cortex-opt %S/Inputs/pad_frame_invalid.mlir --split-input-file --verify-diagnostics

func.func @pad(%frame: tensor<60x90x3xui8>, %any: tensor<?x?x3xui8>) -> (tensor<64x96x3xui8>, tensor<64x96x3xui8>, tensor<?x?x3xui8>) {
  %a = cortex.pad_frame %frame {block = 16 : i64} : tensor<60x90x3xui8> -> tensor<64x96x3xui8>
  %b = cortex.pad_frame %a {block = 32 : i64} : tensor<64x96x3xui8> -> tensor<64x96x3xui8>
  %c = cortex.pad_frame %any : tensor<?x?x3xui8> -> tensor<?x?x3xui8>
  func.return %a, %b, %c : tensor<64x96x3xui8>, tensor<64x96x3xui8>, tensor<?x?x3xui8>
}

// CHECK-LABEL: func.func @pad
// CHECK-NEXT:    %a = cortex.pad_frame %frame {block = 16 : i64} : tensor<60x90x3xui8> -> tensor<64x96x3xui8>
// CHECK-NEXT:    %b = cortex.pad_frame %a : tensor<64x96x3xui8> -> tensor<64x96x3xui8>
// CHECK-NEXT:    %c = cortex.pad_frame %any : tensor<?x?x3xui8> -> tensor<?x?x3xui8>
