"""The `xdsl.universe` entry point: plain `xdsl-opt` learns cortex from here."""

from xdsl.universe import Universe

from cortex.registry import PASS_LOCATIONS, TARGET_LOCATIONS, _loader


def _dialect():
    from cortex.dialects import Cortex

    return Cortex


CORTEX_UNIVERSE = Universe(
    all_dialects={"cortex": _dialect},
    all_passes={name: _loader(*where) for name, where in PASS_LOCATIONS.items()},
    all_targets={name: _loader(*where) for name, where in TARGET_LOCATIONS.items()},
)
