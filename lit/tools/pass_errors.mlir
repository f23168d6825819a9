// Bad pipelines: an unknown pass (with a suggestion), an option the pass does
// not have, an option value of the wrong type, and a pipeline that does not
// parse. One `error:` line each, exit status 1, no traceback.
// RUN: not cortex-opt %s -p cortex-nonsense 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not cortex-opt %s -p canonicalise 2>&1 | filecheck %s --check-prefix=SUGGEST
// RUN: not cortex-opt %s -p 'canonicalize{aggressive=true}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not cortex-opt %s -p 'expand-math-to-polynomials{terms=many}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not cortex-opt %s -p 'cse,canonicalize{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not cortex-opt %s -p 'cse canonicalize' 2>&1 | filecheck %s --check-prefix=SEPARATOR
// RUN: not cortex-opt %s -p cortex-nonsense 2>&1 | not grep Traceback
// RUN: not cortex-opt %s -p 'cse,canonicalize{' 2>&1 | not grep Traceback

// UNKNOWN: error: unknown pass 'cortex-nonsense'
// SUGGEST: error: unknown pass 'canonicalise'; did you mean 'canonicalize'?
// OPTION: error: pass 'canonicalize' has no option 'aggressive'; it takes no options
// VALUE: error: invalid options for pass 'expand-math-to-polynomials': Incompatible types: given ('many',), expected int | None; its options are terms: int|None
// SYNTAX: <pass-pipeline>:1:18: error: invalid pass pipeline: Expected argument name here
// SYNTAX-NEXT: {{^}}cse,canonicalize{
// SYNTAX-NEXT: {{^}}                 ^
// SEPARATOR: <pass-pipeline>:1:4: error: invalid pass pipeline: Expected a comma or pass arguments here

func.func @f() {
  func.return
}
