"""Every reference kernel, registered, and the policy they compute under: no xDSL, no dialect.

Importing the kernel modules fills `KERNELS` (each registers itself with
`@kernel`); this module imports them all, so `KERNELS` read from here is the
complete table. The runtime binds a program's externs from it and runs
generated code under `FLOAT_ERRORS` where xDSL cannot be imported;
`cortex.semantics.kernels` adds what calls a kernel on an op instance.
"""

from __future__ import annotations

from cortex.semantics import (  # noqa: F401 - their @kernel registrations
    layout_kernels,
    quant_kernels,
    tensor_kernels,
    vision_kernels,
    window_kernels,
)
from cortex.semantics.kernel_table import KERNELS

FLOAT_ERRORS: dict[str, str] = {"divide": "ignore", "invalid": "ignore", "over": "ignore"}
"""The floating-point error policy of every computation Cortex runs: IEEE results (x/0 = ±inf,
0/0 = nan, overflow to inf), no warnings. The kernels state it op by op (`np.errstate` around what
can produce them); the NumPy backend runs its generated code under it as a whole
(`cortex.runtime.generated.call_generated`), so both engines behave alike on, say, an all-black frame."""

NO_KERNEL = frozenset({"cortex.state", "cortex.update_state", "cortex.weight"})
"""Ops whose value is not a function of their operands: the interpreter handles them."""

__all__ = ["FLOAT_ERRORS", "KERNELS", "NO_KERNEL"]
