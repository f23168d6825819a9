"""The three places Cortex patches xDSL (all in `cortex.dialects.xdsl_patches`), each pinned: remove a patch and its test fails."""

from __future__ import annotations

import threading

from xdsl import builder as xdsl_builder
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32
from xdsl.ir import Operation

from cortex.dialects import xdsl_patches


def test_splat_is_by_bits():
    """Once cortex.dialects is loaded, [-0.0, 0.0] is two values (xDSL's == calls it a splat); [1, 1] stays one."""
    t = TensorType(f32, [2])
    assert not DenseIntOrFPElementsAttr.from_list(t, [-0.0, 0.0]).is_splat()
    assert DenseIntOrFPElementsAttr.from_list(t, [1.0, 1.0]).is_splat()


def test_builder_hook_is_permanent_and_installed_once():
    """xDSL's per-`with` swap hands back the permanent hook, so threads cannot interleave save/restore."""
    hook = Operation.__post_init__
    assert getattr(hook, "cortex_permanent_hook", False)
    assert xdsl_builder._override_operation_post_init() is hook
    threads = [threading.Thread(target=xdsl_patches.install) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Operation.__post_init__ is hook  # idempotent


def test_xdsl_opt_plugin_gets_the_linear_time_string_pattern():
    from xdsl.utils.mlir_lexer import MLIRLexer

    from cortex.dialects.xdsl_patches import STRING_LITERAL
    from cortex.universe import CORTEX_UNIVERSE

    assert CORTEX_UNIVERSE.all_dialects
    assert MLIRLexer._unescaped_characters_regex is STRING_LITERAL
