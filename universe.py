"""The `xdsl.universe` entry point: plain `xdsl-opt` learns cortex from here."""

from xdsl.universe import Universe

from cortex.dialects.xdsl_patches import install_linear_time_lexer
from cortex.registry import PASS_LOCATIONS, TARGET_LOCATIONS, _loader


def _dialect():
    from cortex.dialects import Cortex

    return Cortex


install_linear_time_lexer()  # this plugin's load is the one hook into a plain xdsl-opt process

CORTEX_UNIVERSE = Universe(
    all_dialects={"cortex": _dialect},
    all_passes={name: _loader(*where) for name, where in PASS_LOCATIONS.items()},
    all_targets={name: _loader(*where) for name, where in TARGET_LOCATIONS.items()},
)
