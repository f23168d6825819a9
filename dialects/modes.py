"""The mode table, as the dialect side names it: it lives in `cortex.semantics.modes` (no xDSL), which
the tools read without loading the dialect (`cortex-run --help` lists the modes)."""

from cortex.semantics.modes import (
    BLUR_AUTO,
    DEFAULT_ENTRY,
    DEFAULT_MODE,
    INPUT_DEFAULTS,
    MODES,
    UnknownModeError,
    is_weight,
    load_modes,
    mode_weights,
)

__all__ = [
    "BLUR_AUTO",
    "DEFAULT_ENTRY",
    "DEFAULT_MODE",
    "INPUT_DEFAULTS",
    "MODES",
    "UnknownModeError",
    "is_weight",
    "load_modes",
    "mode_weights",
]
