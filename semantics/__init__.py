"""Op semantics: reference kernels and value conversions; imports no dialect, pass or lowering code."""
