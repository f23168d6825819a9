// Unreadable input is one diagnostic, not a traceback; empty input is an
// empty module, as with mlir-opt.
// RUN: not cortex-opt %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cortex-opt %S 2>&1 | filecheck %s --check-prefix=DIRECTORY
// RUN: %python -c "open(r'%t.latin1', 'wb').write(b'\xff\xfe')"
// RUN: not cortex-opt %t.latin1 2>&1 | filecheck %s --check-prefix=ENCODING
// RUN: cortex-opt < %S/Inputs/empty.mlir | filecheck %s --check-prefix=EMPTY
// RUN: not cortex-opt --no-such-flag %s 2>&1 | filecheck %s --check-prefix=FLAG

// MISSING: error: could not open input file '{{.*}}does-not-exist.mlir': No such file or directory
// DIRECTORY: error: could not open input file '{{.*}}': Is a directory
// ENCODING: error: input '{{.*}}latin1' is not UTF-8 text (byte 0)
// EMPTY: builtin.module {
// EMPTY-NEXT: }
// FLAG: cortex-opt: error: unrecognized arguments: --no-such-flag
