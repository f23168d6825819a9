"""How `canonicalize` finds the cortex patterns: through the `CortexCanonicalization` trait the ops carry,
which reads `cortex.dialects.canonicalization.patterns_for` when first asked. Nothing is registered at
import: importing the dialect loads no pattern module, and the trait's module holds no table to fill."""

from __future__ import annotations

import subprocess
import sys

from xdsl.traits import HasCanonicalizationPatternsTrait

from cortex.dialects import canonicalization_traits
from cortex.dialects.canonicalization import CANONICAL, patterns_for
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.cortex import ALL_OPS
from cortex.dialects.folding import FoldConstantOperands, may_fold
from cortex.dialects.quant import QuantizeOp, RequantizeOp
from cortex.dialects.quant_canonicalization import QUANT_CANONICAL


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_importing_the_dialect_loads_no_pattern_module():
    loaded = run_python(
        "import sys, cortex.dialects, cortex.ir\n"
        "print(sorted(m for m in sys.modules if m.endswith('canonicalization') and m.startswith('cortex.')))"
    )
    assert loaded == "[]"


def test_canonicalize_finds_the_patterns_on_first_use():
    """A fresh interpreter that only parses and canonicalises (no pass module, no dialect assembly
    imported by hand) still folds x·1 and quantize(dequantize(q))."""
    out = run_python(
        "from cortex.ir import parse_module, to_text\n"
        "from xdsl.transforms.canonicalize import CanonicalizePass\n"
        "from cortex.ir import make_context\n"
        "m = parse_module('''func.func @f(%x: tensor<3xf32>, %q: tensor<3xi8>) -> (tensor<3xf32>, tensor<3xi8>) {\n"
        "  %one = cortex.constant dense<1.0> : tensor<f32>\n"
        "  %r = cortex.mul %x, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
        "  %d = cortex.dequantize %q {scale = 0.5 : f32, zero_point = 0 : i64} : tensor<3xi8> -> tensor<3xf32>\n"
        "  %s = cortex.quantize %d {scale = 0.5 : f32, zero_point = 0 : i64} : tensor<3xf32> -> tensor<3xi8>\n"
        "  func.return %r, %s : tensor<3xf32>, tensor<3xi8>\n"
        "}''')\n"
        "CanonicalizePass().apply(make_context(), m)\n"
        "print(sorted({op.name for op in m.walk() if op.name.startswith('cortex.')}))"
    )
    assert out == "[]"


def test_the_trait_answers_the_table_for_every_op_class():
    for op_class in ALL_OPS:
        traits = op_class.get_traits_of_type(HasCanonicalizationPatternsTrait)
        if not traits:
            continue
        assert [type(t) for t in traits] == [CortexCanonicalization]
        patterns = traits[0].get_patterns(op_class)
        assert patterns == patterns_for(op_class)
        fold = (FoldConstantOperands,) if may_fold(op_class) else ()
        assert tuple(map(type, patterns)) == fold + tuple(
            type(p) for p in CANONICAL.get(op_class, ()) + QUANT_CANONICAL.get(op_class, ())
        )


def test_the_quantisation_rewrites_come_through_the_trait():
    for op_class in (QuantizeOp, RequantizeOp):
        (trait,) = op_class.get_traits_of_type(HasCanonicalizationPatternsTrait)
        assert set(QUANT_CANONICAL[op_class]) <= set(trait.get_patterns(op_class))


def test_the_traits_module_holds_no_table_to_fill():
    """No registry: no list, dict or set at module level that an import could extend."""
    mutable = [name for name, value in vars(canonicalization_traits).items() if isinstance(value, list | dict | set)]
    assert mutable == [n for n in mutable if n.startswith("__")], mutable
