"""Release large arrays where they die: `del name` after a value's last read.

Generated functions are straight-line code over whole arrays, and a Python
local holds its array until the function returns. Without this step every
intermediate of a frame is alive at once: the decomposed scene change held
~18 full-size float64 images (44 MB at 480×640) where ~6 are ever needed.
The cost is not the memory itself but where it comes from: each call then
asks the allocator for far more than the previous call freed into reusable
chunks, glibc serves large requests from fresh pages (mmap, or heap it
trimmed back to the OS at the end of the previous call), and the kernel
zero-fills every fresh page on first touch. Measured on the decomposed scene
change, releasing dead arrays cut the minor page faults per frame to a third
and the CPU time per frame to half; with page faults disabled altogether
(glibc's thresholds raised by environment) both cost the same, i.e. the
faults *were* the difference (the figures: benchmarks/README.md, "Figures behind the compiler's choices").

Released as soon as dead, an array's memory goes back to the allocator's free
lists mid-call and the next intermediate of the same size reuses it, already
mapped. The rule is by Python name, on the emitted syntax trees, so it sees
every read however a translator spelt it:

- a name is released in the block whose statements assign it, after the last
  chunk of that block whose statements (nested blocks included) read it, or
  right after its assignment if nothing reads it;
- names assigned in more than one block (the results of an `if` or a loop,
  which both branches or the body assign), parameters, and names read by a
  chunk outside the defining block are never released;
- only arrays of at least `RELEASE_BYTES`, or of unknown size (a temporary
  whose translator did not say, a dynamic shape); scalars and small arrays
  cost nothing to keep and their `del` would only clutter the code;
- nothing follows a `return`.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterable

from cortex.backends.numpy.codegen import RELEASE_BYTES, Chunk
from cortex.backends.numpy.syntax import parse


def _loads(nodes: Iterable[ast.AST]) -> Counter[str]:
    found: Counter[str] = Counter()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                found[n.id] += 1
    return found


def _header_loads(header: str) -> Counter[str]:
    """Names read by a nested block's header (`if c:`, `for i in range(a, b, s):`), which is text."""
    text = header.strip()
    if text.startswith(("else", "elif")):  # a continuation: parse it after a dummy `if`
        text = "if 0:\n    pass\n" + text
    return _loads([parse(text + "\n    pass")])


def _stores(statements: Iterable[ast.stmt]) -> set[str]:
    return {
        n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _subtree_loads(chunk: Chunk) -> Counter[str]:
    """Every name read by the chunk's statements, its nested blocks' headers and statements."""
    found = _loads(chunk.statements)
    for header, inner in chunk.blocks:
        found += _header_loads(header)
        for c in inner:
            found += _subtree_loads(c)
    found.update({name: 1 for name in chunk.uses if name not in found})  # what the emitter recorded, to be safe
    return found


def _blocks(chunks: list[Chunk]) -> Iterable[list[Chunk]]:
    yield chunks
    for chunk in chunks:
        for _, inner in chunk.blocks:
            yield from _blocks(inner)


def release_dead(chunks: list[Chunk], params: Iterable[str], large: Callable[[str], bool]) -> None:
    """Append `del` statements for the large arrays each chunk of `chunks` (a function body) is the last to read."""
    blocks = list(_blocks(chunks))
    stored_in: dict[str, set[int]] = {}
    for b, block in enumerate(blocks):
        for name in _stores(s for chunk in block for s in chunk.statements):
            stored_in.setdefault(name, set()).add(b)
    total = Counter[str]()
    for chunk in chunks:
        total += _subtree_loads(chunk)
    keep = set(params)
    for b, block in enumerate(blocks):
        mine = {name for name, where in stored_in.items() if where == {b} and name not in keep and large(name)}
        if not mine:
            continue
        reads = [_subtree_loads(chunk) for chunk in block]
        inside = Counter[str]()
        for r in reads:
            inside += r
        last: dict[str, int] = {}
        for i, chunk in enumerate(block):
            for name in _stores(chunk.statements) & mine:
                last.setdefault(name, i)  # never read: dies where it is assigned
            for name in reads[i]:
                if name in mine:
                    last[name] = i
        for name in list(last):
            if inside[name] != total[name]:  # read outside the block that assigns it: keep
                del last[name]
        for i, chunk in enumerate(block):
            dead = sorted(name for name, at in last.items() if at == i)
            if dead and not (chunk.statements and isinstance(chunk.statements[-1], ast.Return)):
                _release(chunk, dead)


def _release(chunk: Chunk, dead: list[str]) -> None:
    """`del` the dead names in `chunk`: after its nested blocks if it has any, else right after the
    statement that reads (or assigns) each last, so a fused body's temporaries go as they die."""
    if chunk.blocks:
        chunk.tail.append(_delete(dead))
        return
    wanted, last_touch = set(dead), {}
    for k, st in enumerate(chunk.statements):
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id in wanted:
                last_touch[n.id] = k
    at: dict[int, list[str]] = {}
    for name in dead:
        at.setdefault(last_touch.get(name, len(chunk.statements) - 1), []).append(name)
    for k in sorted(at, reverse=True):
        chunk.statements.insert(k + 1, _delete(sorted(at[k])))


def _delete(names: list[str]) -> ast.Delete:
    return ast.Delete(targets=[ast.Name(n, ast.Del()) for n in names], lineno=0)


__all__ = ["RELEASE_BYTES", "release_dead"]
