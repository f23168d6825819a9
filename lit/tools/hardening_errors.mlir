// Inputs and options that used to end in an internal error (a Python
// exception) are one located diagnostic and exit 1.
// RUN: %python -c "open(r'%t.bom.mlir', 'wb').write(b'\xef\xbb\xbfbuiltin.module {}\n')"
// RUN: not cortex-opt %t.bom.mlir 2>&1 | filecheck %s --check-prefix=BOM
// RUN: %python -c "open(r'%t.deep.mlir', 'w').write('builtin.module {' * 3000 + '}' * 3000)"
// RUN: not cortex-opt %t.deep.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: %python -c "open(r'%t.type.mlir', 'w').write('func.func @f(%%x: ' + 'tensor<4x' * 5000 + 'f32' + '>' * 5000 + ') { func.return }')"
// RUN: not cortex-opt %t.type.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{seed=-3}' 2>&1 | filecheck %s --check-prefix=SEED
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-profile{frames=100000000000000000000000}' 2>&1 | filecheck %s --check-prefix=FRAMES
// RUN: %python -c "open(r'%t.table', 'wb').write(bytes(range(256)))"
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=balanced table="%t.table"}' 2>&1 | filecheck %s --check-prefix=TABLE
// RUN: %python -c "open(r'%t.nan.json', 'w').write('{\"m\": {\"wc\": NaN, \"wt\": 0, \"ws\": 0, \"wm\": 0}}')"
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=m table="%t.nan.json"}' 2>&1 | filecheck %s --check-prefix=NAN

// BOM: bom.mlir:1:1: error: the input starts with a UTF-8 byte-order mark (U+FEFF)
// BOM-NOT: internal error
// DEEP: {{.*}}.mlir:1:{{[0-9]+}}: error: the input nests regions or types too deeply for the parser
// DEEP-NOT: internal error
// SEED: error: pass 'cortex-profile' failed: seed must be a non-negative whole number, got -3
// FRAMES: error: pass 'cortex-profile' failed: frames must be a whole number from 1 to 10000, got 100000000000000000000000
// TABLE: error: pass 'cortex-specialize-mode' failed: cannot read mode table {{.*}}.table: not UTF-8 text (byte 128)
// NAN: error: pass 'cortex-specialize-mode' failed: cannot read mode table {{.*}}.nan.json: NaN is not a valid weight (weights must be finite numbers)

func.func @f() {
  func.return
}
