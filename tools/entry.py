"""The console scripts' entry points: a Ctrl-C while Cortex and xDSL load exits 130, quietly.

`cortex-opt`, `cortex-run` and `cortex-import-onnx` handle KeyboardInterrupt once running, but
importing them takes a while (xDSL, NumPy, OpenCV) and an interrupt there
would print a traceback. This module imports nothing heavy itself (`cortex`
loads its API lazily), so the window before the `try` is tiny. `cortex-opt
--version` is answered here: cortex-opt's driver is xDSL's, so importing it
loads xDSL and the dialect, which the version line does not need.
"""

from __future__ import annotations

import sys
from importlib import import_module

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def run(module: str) -> None:
    try:
        main = import_module(module).main
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    sys.exit(main())


def cortex_opt() -> None:
    if sys.argv[1:] == ["--version"]:  # the driver is xDSL's: answered here, before xDSL loads
        from cortex.tools.versions import opt_version_line

        print(opt_version_line())
        sys.exit(0)
    run("cortex.tools.cortex_opt")


def cortex_run() -> None:
    run("cortex.tools.cortex_run")


def cortex_import_onnx() -> None:
    run("cortex.tools.import_onnx")
