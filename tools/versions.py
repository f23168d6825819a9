"""`--version`: what a bug report needs — cortex's version and those of the libraries and backend it runs on.

    cortex-run 0.1.0 (xDSL 0.74.0, NumPy 2.1.3, OpenCV 4.10.0; backend numpy)
    cortex-opt 0.1.0 (xDSL 0.74.0)
"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

import cortex


def library_version(distribution: str, module: str | None = None) -> str:
    """The installed distribution's version, else the module's `__version__`, else "not installed"."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        pass
    if module is not None:
        try:
            return str(__import__(module).__version__)
        except (ImportError, AttributeError):
            pass
    return "not installed"


def version_line(program: str, backend: str | None = None) -> str:
    import cv2
    import numpy

    libraries = f"xDSL {library_version('xdsl')}, NumPy {numpy.__version__}, OpenCV {cv2.__version__}"
    used = f"; backend {backend}" if backend else ""
    return f"{program} {cortex.__version__} ({libraries}{used})"


OPT_VERSION_FORMAT = f"cortex-opt {cortex.__version__} (xDSL {{xdsl_version}})"
"""cortex-opt's `--version` line, cortex's version first: xDSL's driver fills in its own version and prints
it, and `opt_version_line` without loading xDSL."""


def opt_version_line() -> str:
    """What `cortex-opt --version` prints, read from the installed xDSL's metadata (xDSL is not imported)."""
    return OPT_VERSION_FORMAT.format(xdsl_version=library_version("xdsl", "xdsl"))


class VersionAction(argparse.Action):
    """`--version`: prints `version_line` with the backend chosen so far on the command line (or the default)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        backend = getattr(namespace, "backend", None) or parser.get_default("backend")
        runner = getattr(namespace, "runner", None) or parser.get_default("runner")
        print(version_line(parser.prog, "reference" if runner == "reference" else backend))
        parser.exit()


__all__ = ["OPT_VERSION_FORMAT", "VersionAction", "library_version", "opt_version_line", "version_line"]
