// ONNX external data: exactly the bytes the tensor declares (4 x f32 = 16), checked before reading,
// from inside the model's folder; every problem one line naming the initializer.
// RUN: rm -rf %t && %python %S/Inputs/external_data.py %t/ok location=w.bin
// RUN: cortex-opt %t/ok/m.onnx | filecheck %s --check-prefix=OK
// RUN: %python %S/Inputs/external_data.py %t/huge location=w.bin length=1000000000000
// RUN: not cortex-opt %t/huge/m.onnx 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: %python %S/Inputs/external_data.py %t/nul location=wNUL.bin
// RUN: not cortex-opt %t/nul/m.onnx 2>&1 | filecheck %s --check-prefix=NUL
// RUN: %python %S/Inputs/external_data.py %t/past location=w.bin offset=1010
// RUN: not cortex-opt %t/past/m.onnx 2>&1 | filecheck %s --check-prefix=PAST

// OK: dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
// HUGE: error: onnx initializer 'w': external data length 1000000000000 is not the 16 bytes its type and dimensions declare
// NUL: error: onnx initializer 'w': external data location 'w\x00.bin' contains a NUL character
// PAST: error: onnx initializer 'w': external data 'w.bin' holds 1016 bytes, fewer than offset 1010 + 16
