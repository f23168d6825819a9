"""Former path of `cortex.semantics.abi_facts` (the lowered-module ABI's plain facts), kept for one release so
that one name, `abi`, means one module: `cortex.dialects.abi`, the ABI on IR. Reading a name here warns and
gives `abi_facts`' (which imports no xDSL, as before)."""

from typing import TYPE_CHECKING

from cortex.deprecation import moved_module

if not TYPE_CHECKING:
    __getattr__ = moved_module(__name__, "cortex.semantics.abi_facts")
