"""Tools for writing rewrites over cortex IR: the declarative pattern matcher (`pattern.py`).

A level of its own, below the passes that use it (`passes/fuse_batch_norm.py`,
`passes/recognize_gelu.py`): it reads the dialects, never a pass. It only
matches; the rewrites themselves are xDSL `RewritePattern`s, as the
canonicalisations are.
"""
