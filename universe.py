"""The `xdsl.universe` entry point: plain `xdsl-opt` learns cortex from here."""

from xdsl.universe import Universe
from xdsl.utils.mlir_lexer import MLIRLexer

from cortex.ir import STRING_LITERAL
from cortex.registry import PASS_LOCATIONS, TARGET_LOCATIONS, _loader


def _dialect():
    from cortex.dialects import Cortex

    return Cortex


def install_linear_time_lexer() -> None:
    """Patch xDSL: xdsl-opt's own lexer backtracks exponentially on an unterminated string; this plugin's load is
    the one hook into that process, so it gets `cortex.ir.LinearTimeLexer`'s pattern (same strings accepted)."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL


install_linear_time_lexer()

CORTEX_UNIVERSE = Universe(
    all_dialects={"cortex": _dialect},
    all_passes={name: _loader(*where) for name, where in PASS_LOCATIONS.items()},
    all_targets={name: _loader(*where) for name, where in TARGET_LOCATIONS.items()},
)
