"""The runtime: loads and runs compiled programs; it never compiles.

`cortex.compile` (the driver) produces a `Program` (`program.py`): plain data
holding the entry's signature, the state layout, the weights and, per part
of the entry (the whole entry, its frame split and stage split), the
executable form the backend made (`executables.py`: one loader per kind;
"numpy" is generated Python source). Everything here only loads and runs
programs — `LoadedProgram` (`pipeline.py`) called frame after frame, and
one call's concurrent stages (`threads.py`) and the engines that keep
frames in flight (`engines/`: threads, worker processes, Ray actors, one
interface and one table, `ENGINES`), all driving the one loop of
`engines/flight.py`. No module of this level imports `cortex.passes`,
`cortex.lowering`, `cortex.backends`, `cortex.driver`, the dialect or, even
indirectly, xDSL (tests/test_layers.py): the ABI's facts and the kernel table
it reads live in `cortex.semantics` (`abi.py`, `all_kernels.py`). So a
program runs wherever the runtime is installed, compiler or not, and
importing the runtime changes nothing in xDSL; `cortex.load(path)` reads a
saved one back.
"""
