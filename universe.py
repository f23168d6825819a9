"""The `xdsl.universe` entry point: plain `xdsl-opt` learns cortex from here."""

from xdsl.universe import Universe
from xdsl.utils.mlir_lexer import MLIRLexer

from cortex.ir import STRING_LITERAL
from cortex.registry import PASS_LOCATIONS, TARGET_LOCATIONS, _loader


def _dialect():
    from cortex.dialects import Cortex

    return Cortex


# Plain xdsl-opt builds xDSL's own lexer, whose string pattern backtracks
# exponentially on an unterminated string (see cortex.ir.LinearTimeLexer).
# Loading this plugin is the one hook we have into that process, so it gives
# xdsl-opt the linear-time pattern too; it accepts the same strings.
MLIRLexer._unescaped_characters_regex = STRING_LITERAL

CORTEX_UNIVERSE = Universe(
    all_dialects={"cortex": _dialect},
    all_passes={name: _loader(*where) for name, where in PASS_LOCATIONS.items()},
    all_targets={name: _loader(*where) for name, where in TARGET_LOCATIONS.items()},
)
