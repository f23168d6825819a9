"""The mutants of `scripts/mutate.py`: one exact-substring edit each, and the tests that should notice.

`old` must occur exactly once in `path` (relative to the repository root);
`tests` are the pytest files (or node ids) run for the mutant: the ones a
developer would expect to catch it, not the whole suite. When code moves,
update `path`/`old` here (`python3 scripts/mutate.py --check` lists stale
entries).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


T_LAYOUT = "tests/test_layout_differential.py"
T_OWN = "tests/test_ownership.py"
T_SIGNED = "tests/test_signed_weights.py"
T_FOLD = "tests/test_fold_limit.py"
T_VERIFY = "tests/test_verifier_rules.py"
T_THRESH = "tests/test_thresholds.py"

# The four edits of issue 14 that passed every test, and the three only lit noticed.
ISSUE_14 = [
    Mutant(
        "issue14-transpose-inverse-perm",
        "backends/numpy_linalg.py",
        "perm = list(op.permutation.get_values())",
        "perm = [int(i) for i in np.argsort(list(op.permutation.get_values()))]",
        (T_LAYOUT, "tests/test_numpy_backend.py"),
    ),
    Mutant(
        "issue14-runtime-no-alias-check",
        "backends/runtime.py",
        "if isinstance(value, np.ndarray) and _aliased(value, outputs, inputs):",
        "if False:",
        (T_OWN, "tests/test_numpy_backend.py"),
    ),
    Mutant(
        "issue14-fusion-drops-negative-weights",
        "dialects/canonicalization.py",
        "owner.value.value.data == 0.0",
        "owner.value.value.data <= 0.0",
        (T_SIGNED, "tests/test_canonicalize.py"),
    ),
    Mutant(
        "issue14-fold-limit-exclusive",
        "dialects/folding.py",
        "shapes.num_elements(t.get_shape()) <= MAX_FOLDED_ELEMENTS",
        "shapes.num_elements(t.get_shape()) < MAX_FOLDED_ELEMENTS",
        (T_FOLD, "tests/test_canonicalize.py"),
    ),
    Mutant(
        "issue14-verifier-no-conv2d-channel-rule",
        "dialects/shapes.py",
        "if not dims_agree(x[1], w[1]):",
        "if False:",
        (T_VERIFY,),
    ),
    Mutant(
        "issue14-verifier-duplicate-reduce-axes",
        "dialects/shapes.py",
        "if len(set(norm)) != len(norm):",
        "if False:",
        (T_VERIFY,),
    ),
    Mutant(
        "issue14-temporal-smooth-oge",
        "lowering/vision.py",
        'reset = b.add(arith.CmpfOp(op.scene, threshold, "ogt")).result',
        'reset = b.add(arith.CmpfOp(op.scene, threshold, "oge")).result',
        (T_THRESH,),
    ),
]

MUTANTS: list[Mutant] = [*ISSUE_14]
