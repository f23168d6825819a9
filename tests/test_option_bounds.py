"""Numeric pass options and API arguments are whole numbers within bounds.

`cortex-schedule{workers=2**63-1}` allocated 17 GB in 40 s; a negative
`max_elements`/`max_window` silently meant "never". Every such option now
goes through `cortex.errors.whole_number`.
"""

from __future__ import annotations

import pytest

import cortex
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import build_l2_pipeline


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("cortex-schedule{workers=9223372036854775807}", "workers must be a whole number from 1 to 4096"),
        ("cortex-schedule{workers=0}", "workers must be a whole number from 1 to 4096, got 0"),
        ("cortex-fold-constant-layouts{max_elements=-5}", "max_elements must be a whole number from 0"),
        ("cortex-unroll-pooling{max_window=-1}", "max_window must be a whole number from 0 to 4096"),
        ("cortex-schedule{workers=2.5}", "Incompatible types"),
        ('cortex-schedule{workers="2"}', "Incompatible types"),
    ],
)
def test_pass_options_out_of_bounds_are_one_error(pipeline, message):
    module = build_l2_pipeline(16, 32, 8)
    with pytest.raises(CortexError, match=message):
        cortex.run_passes(module, pipeline)


@pytest.mark.parametrize("value", [True, "2", 2.5, None, -1, 2**63])
def test_whole_number_refuses_what_is_not_one(value):
    from cortex.errors import whole_number

    with pytest.raises(CortexError, match="workers must be a whole number from 1 to 64"):
        whole_number("workers", value, 1, 64)


def test_whole_number_passes_a_whole_number_through():
    from cortex.errors import whole_number

    assert whole_number("workers", 3, 1, 64) == 3
