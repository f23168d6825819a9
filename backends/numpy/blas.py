"""Whether generated code reaches BLAS, decided on the emitter's own syntax trees when it emits them.

The runtime holds BLAS to a thread limit around a plain call (`cortex.runtime.blas`), which costs
microseconds per call, so it does so only for code that may reach BLAS: a matrix product (`@`,
`np.dot`, `np.vdot`, `np.inner`, `np.tensordot`, `np.einsum`, `np.matmul`, `np.linalg.*`) or an extern
call (a kernel may use NumPy's BLAS). The emitter records the answer in the executable's meta
(`calls_blas`); the backend's record reads it into the program (`cortex.backends.record`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

PRODUCTS = frozenset({"dot", "vdot", "inner", "tensordot", "einsum", "matmul"})
"""NumPy functions (`np.<name>`) that hand their work to BLAS."""


def _reaches(node: ast.AST, externs: frozenset[str]) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in externs
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np":
        return func.attr in PRODUCTS
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and func.value.attr == "linalg"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "np")


def reaches_blas(statements: Iterable[ast.AST], externs: Iterable[str]) -> bool:
    """Whether any of `statements` computes a matrix product or calls one of `externs` (names bound to kernels)."""
    bound = frozenset(externs)
    return any(_reaches(node, bound) for statement in statements for node in ast.walk(statement))


__all__ = ["PRODUCTS", "reaches_blas"]
