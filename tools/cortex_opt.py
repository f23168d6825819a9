"""cortex-opt: the mlir-opt of Cortex, built on xDSL's opt driver."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from cortex.dialects import Cortex
from cortex.passes.registry import cortex_passes, cortex_targets


class CortexOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        if "cortex" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("cortex", lambda: Cortex)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in cortex_passes().items():
            self.available_passes[name] = factory

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets.update(cortex_targets())


def main(argv: Sequence[str] | None = None) -> int:
    try:
        CortexOptMain(description="Cortex modular optimizer driver", args=argv).run()
    except (ArgSpecParseError, ParseError, DiagnosticException, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
