"""Former path of the mode table, kept for one release: it has one home, `cortex.semantics.modes` (no xDSL),
which the dialect, the passes and the tools import. Reading a name here warns and gives that module's."""

from typing import TYPE_CHECKING

from cortex.deprecation import moved_module

if not TYPE_CHECKING:
    __getattr__ = moved_module(__name__, "cortex.semantics.modes")
