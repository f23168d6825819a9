"""The mode table: runtime weights per request type.

One row per mode; `power_save` zeroes the saliency and motion weights. Mode specialisation, the
reference interpreter and the runtime all read weights from here, and a call's weights are resolved here
(`weights_for_call`: defaults, then the mode's row, then explicit weights).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from cortex.errors import CortexError

MODES: dict[str, dict[str, float]] = {
    "balanced": {"wc": 0.25, "wt": 0.35, "ws": 0.2, "wm": 0.2},
    "power_save": {"wc": 0.7, "wt": 0.3, "ws": 0.0, "wm": 0.0},
    "motion": {"wc": 0.1, "wt": 0.2, "ws": 0.2, "wm": 0.5},
}


DEFAULT_MODE = "balanced"
"""The mode the API, the tools and the generic passes use when none is given."""

DEFAULT_ENTRY = "l2_frame"
"""The entry function the API, the tools and the generic passes run when none is named: the L2 pipeline's."""


INPUT_DEFAULTS: dict[str, float] = {"blur_threshold": 100.0, "blur_fraction": 0.0}
"""Runtime inputs shared by every mode, with the values they take when not given.

They are read with `cortex.weight` like the mode weights, but mode
specialisation leaves them alone (unless a mode row names them), so one
compiled pipeline takes any value at run time. The L2 pipeline's blur gate
skips scoring when sharpness < max(blur_threshold, blur_fraction · running
median of recent sharpness): the defaults are the original fixed gate
(sharpness < 100); `cortex-run --blur-threshold auto` sets 0 and 0.5.
"""

BLUR_AUTO: dict[str, float] = {"blur_threshold": 0.0, "blur_fraction": 0.5}
"""The relative gate: a frame is blurred below half the running median of recent sharpness."""


class UnknownModeError(ValueError):
    pass


def load_modes(path: str | Path | None = None) -> dict[str, dict[str, float]]:
    """The built-in table, or one read from a JSON file {mode: {weight: value}}."""
    if path is None:
        return MODES
    try:
        table = json.loads(Path(path).read_bytes().decode("utf-8"), parse_constant=_reject_constant)
    except OSError as e:
        raise UnknownModeError(f"cannot read mode table {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise UnknownModeError(f"cannot read mode table {path}: not UTF-8 text (byte {e.start})") from None
    except (json.JSONDecodeError, ValueError) as e:
        raise UnknownModeError(f"cannot read mode table {path}: {e}") from None
    if not isinstance(table, dict) or not all(
        isinstance(row, dict) and all(is_weight(v) for v in row.values()) for row in table.values()
    ):
        raise UnknownModeError(f"mode table {path} must map mode names to {{weight: finite number}} objects")
    return {m: {k: float(v) for k, v in row.items()} for m, row in table.items()}


def is_weight(value: object) -> bool:
    """A weight is a finite real number (not a bool): NaN or inf would poison every score."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a valid weight (weights must be finite numbers)")


def mode_weights(mode: str, table: dict[str, dict[str, float]] | None = None) -> dict[str, float]:
    table = MODES if table is None else table
    if mode not in table:
        raise UnknownModeError(f"unknown mode '{mode}' (known: {', '.join(sorted(table))})")
    return dict(table[mode])


def weights_for_call(mode: str | None, weights: Mapping[str, float] | None) -> tuple[dict[str, float], str]:
    """The weights a call binds to `cortex.weight` reads: the runtime inputs' defaults, then `mode`'s row
    (the built-in table), then the explicit `weights` (checked: finite numbers); and, for the diagnostic of a
    missing weight, where weights were looked for. Used by both runners (the reference interpreter and
    `cortex.compile`'s options); compare `passes.specialize_mode.specialization_weights`, which is a pass's job."""
    import numpy as np  # here, not at the top: the tools read the table (their --help) without NumPy

    table: dict[str, float] = dict(INPUT_DEFAULTS)
    if mode is not None:
        try:
            table.update(mode_weights(mode))
        except UnknownModeError as e:
            raise CortexError(str(e)) from None
    if weights is not None and not isinstance(weights, Mapping):
        raise CortexError(f"weights must be a mapping of weight name to number, got {type(weights).__name__}")
    for name, value in (weights or {}).items():
        if not isinstance(name, str):
            raise CortexError(f"weight names are text (a pipeline's weight, e.g. 'wc'), got {name!r} "
                              f"({type(name).__name__})")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise CortexError(f"weight '{name}' must be a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = float("inf")
        if not np.isfinite(number):
            raise CortexError(f"weight '{name}' must be a finite number, got {value!r}")
        table[name] = number
    if mode is None and weights is None:
        return table, "the module reads runtime weights, so give a mode or weights={...}"
    sources = ([f"mode '{mode}'"] if mode is not None else []) + (["weights="] if weights is not None else [])
    return table, f"known weights ({' and '.join(sources)}): {', '.join(sorted(table)) or 'none'}"
