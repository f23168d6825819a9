"""The machinery every NumPy translator shares: values, chunks, the op table.

The emitter walks a lowered function op by op. Each op becomes one *chunk*:
the few Python lines that compute its results, tagged with the cortex op the
lowering says it came from (`cortex.origin`). A chunk records which SSA names
it defines and reads, so chunks nobody reads can be dropped once the walk is
done (xDSL's linalg ops carry no effect traits, so `dce` keeps them in the IR:
an unread `tensor.empty` or zero `linalg.fill` would otherwise cost a frame's
worth of memory traffic).

A value is described by a `Term`: the expression (an `ast` tree, built with
`syntax`, so precedence is the renderer's job) that holds it, its
NumPy dtype and static shape (None for a scalar), and whether the array is a
temporary this code owns (freshly allocated, never aliased), which is what
lets a later op reuse it with `out=` instead of allocating.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import prod
from typing import TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import DiagnosticException

from cortex.backends.numpy import syntax
from cortex.dialects import abi
from cortex.errors import CortexError
from cortex.semantics.values import numpy_dtype


class EmitError(CortexError, DiagnosticException):
    """The lowered module uses something the NumPy backend cannot translate.

    A DiagnosticException too, so `cortex-opt -t numpy` reports it as a one-line error.
    """


RELEASE_BYTES = 128 * 1024
"""Arrays from this size up are released (`del`) when they die (`release`): glibc's default mmap
threshold, from which an allocation may come as fresh, zero-filled pages; smaller ones come from its bins."""


def op_error(op: Operation, message: str) -> EmitError:
    return EmitError(f"numpy backend: '{op.name}' {message}")


# ---------------------------------------------------------------- types


def np_dtype(t: Attribute) -> str:
    """The NumPy dtype name of an MLIR element (or scalar) type."""
    try:
        return numpy_dtype(t.element_type if isinstance(t, TensorType) else t).name
    except CortexError:
        raise EmitError(f"numpy backend: no NumPy dtype for type {t}") from None


def is_float(t: Attribute) -> bool:
    if isinstance(t, TensorType):
        t = t.element_type
    return isinstance(t, AnyFloat)


def bit_width(t: Attribute) -> int:
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    raise EmitError(f"numpy backend: {t} is not an integer type")


def static_shape(t: Attribute) -> tuple[int, ...] | None:
    """The shape of a ranked tensor type (dynamic sizes as -1); None for scalars."""
    if isinstance(t, TensorType):
        return tuple(t.get_shape())
    return None


def tensor_shape(t: Attribute) -> tuple[int, ...]:
    """The shape of a value the lowering guarantees is a ranked tensor."""
    shape = static_shape(t)
    if shape is None:
        raise EmitError(f"numpy backend: expected a tensor, got {t}")
    return shape


def yielded_value(op: Operation, block: Block) -> SSAValue:
    """The first value `block`'s terminator yields (the body of a pad or reduce)."""
    last = block.last_op
    if last is None or not last.operands:
        raise op_error(op, "has a body that yields nothing")
    return last.operands[0]


def dt(dtype: str) -> str:
    """The NumPy spelling of a dtype in generated code."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


# ---------------------------------------------------------------- values


@dataclass(frozen=True)
class Term:
    """How generated code refers to one value: an expression tree, its dtype and shape."""

    expr: ast.expr
    dtype: str
    shape: tuple[int, ...] | None = None  # None: a scalar
    owned: bool = False  # a fresh array no other name aliases

    @property
    def is_array(self) -> bool:
        return self.shape is not None


def literal(value: float | int | bool, dtype: str) -> str:
    """A Python literal for a scalar constant of `dtype`."""
    if dtype == "bool":
        return "True" if value else "False"
    if dtype.startswith(("int", "uint")):
        return str(int(value))
    value = float(value)
    if value != value:
        return "np.nan"
    if value in (float("inf"), float("-inf")):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def literal_expr(value: float | int | bool, dtype: str) -> ast.expr:
    """`literal` as an expression tree (a negative number is a sign applied to it, as Python reads it)."""
    return syntax.parse_expr(literal(value, dtype))


def value_expr(value: object) -> ast.expr:
    """A property value (numbers, strings, tuples, lists, dicts of them) as an expression.

    Unlike `repr`, non-finite floats become `np.nan` / `np.inf` (through
    `literal`), which the generated module, importing numpy as np, evaluates.
    """
    if isinstance(value, float):
        return literal_expr(value, "float64")
    if isinstance(value, str):
        return syntax.string(value)
    if isinstance(value, tuple):
        return syntax.tuple_(*(value_expr(v) for v in value))
    if isinstance(value, list):
        return syntax.list_(*(value_expr(v) for v in value))
    if isinstance(value, dict):
        return ast.Dict([value_expr(k) for k in value], [value_expr(v) for v in value.values()])
    if value is None or isinstance(value, int):  # bool is an int
        return syntax.expr(value)
    raise EmitError(f"numpy backend: cannot write the property value {value!r}")


# ---------------------------------------------------------------- chunks


@dataclass
class Chunk:
    """The Python statements one op became (syntax trees), and what they define and read.

    Statements are `ast` nodes, rendered with `ast.unparse` one per line, each
    followed by the comment naming the source cortex op (the renderer adds it:
    `ast.unparse` keeps no comments). Translators build them with
    `syntax` and add them with `FunctionEmitter.statement`.
    """

    statements: list[ast.stmt]
    defs: tuple[str, ...]
    uses: set[str]
    origin: str
    note: str
    pure: bool = True
    blocks: list[tuple[str, list[Chunk]]] = field(default_factory=list)
    tail: list[ast.stmt] = field(default_factory=list)  # after the nested blocks: `del`s (release)

    @property
    def lines(self) -> list[str]:
        """The statements before the nested blocks (all of them, in a chunk without blocks)."""
        return [ast.unparse(statement) for statement in self.statements + ([] if self.blocks else self.tail)]

    @property
    def tail_lines(self) -> list[str]:
        """The statements after the nested blocks (none in a chunk without blocks: `lines` has them)."""
        return [ast.unparse(statement) for statement in self.tail] if self.blocks else []

    def walk(self) -> Iterator[Chunk]:
        yield self
        for _, chunks in self.blocks:
            for chunk in chunks:
                yield from chunk.walk()


def prune(chunks: list[Chunk]) -> None:
    """Drop pure chunks whose results nobody reads (repeatedly, nested blocks too)."""
    counts: dict[str, int] = {}
    for top in chunks:
        for chunk in top.walk():
            for name in chunk.uses:
                counts[name] = counts.get(name, 0) + 1

    def dead(chunk: Chunk) -> bool:
        """Pure, nothing reads what it defines, and (an if/for) nothing is left inside."""
        unread = all(counts.get(d, 0) == 0 for d in chunk.defs)
        return chunk.pure and unread and all(not inner for _, inner in chunk.blocks)

    def sweep(block: list[Chunk]) -> bool:
        changed = False
        for chunk in list(block):
            for _, inner in chunk.blocks:
                changed |= sweep(inner)
            if dead(chunk):
                block.remove(chunk)
                for name in chunk.uses:
                    counts[name] -= 1
                changed = True
        return changed

    while sweep(chunks):
        pass


# ---------------------------------------------------------------- the op table

Translator = Callable[["FunctionEmitter", Operation], None]
TRANSLATORS: dict[type[Operation], Translator] = {}
OpT = TypeVar("OpT", bound=Operation)


def translates(*op_types: type[Operation]) -> Callable[[Callable[[FunctionEmitter, OpT], None]], Callable[[FunctionEmitter, OpT], None]]:
    """Register a translator for the given op classes (it is only ever called with one of them)."""

    def register(fn: Callable[[FunctionEmitter, OpT], None]) -> Callable[[FunctionEmitter, OpT], None]:
        for op_type in op_types:
            TRANSLATORS[op_type] = cast(Translator, fn)
        return fn

    return register


# ---------------------------------------------------------------- naming

_RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"np"}


def identifier(hint: str | None, default: str) -> str:
    """A Python identifier from an SSA name hint (no leading underscore: those are ours)."""
    name = re.sub(r"\W", "_", hint or "").lstrip("_")
    if not name:
        name = default
    if name[0].isdigit():
        name = f"v{name}"
    return name


class Namer:
    """Unique identifiers within one scope."""

    def __init__(self, taken: set[str] | None = None):
        self.taken = set(_RESERVED) | (taken or set())

    def fresh(self, hint: str) -> str:
        name, n = hint, 0
        while name in self.taken:
            n += 1
            name = f"{hint}_{n}"
        self.taken.add(name)
        return name


# ---------------------------------------------------------------- functions


class FunctionEmitter:
    """Translates the ops of one `func.func` body into chunks of Python."""

    def __init__(self, module, label: str, taken: set[str]):
        self.module = module  # the ModuleEmitter: constants, externs, function names
        self.label = label  # profiling label for ops without a cortex.origin
        self.namer = Namer(taken)
        self.values: dict[SSAValue, Term] = {}
        self.locals: set[str] = set()
        self.temps = 0
        self.sizes: dict[str, int | None] = {}  # bytes of the array a name holds (0: a scalar; None: dynamic)
        self._blocks: list[list[Chunk]] = [[]]
        self._chunk: Chunk | None = None

    # ---- values

    def term(self, value: SSAValue) -> Term:
        """The term of an already-translated value (records the read)."""
        try:
            term = self.values[value]
        except KeyError:
            raise EmitError(f"numpy backend: value {value} used before its definition") from None
        self.read(term.expr)
        return term

    def expr(self, value: SSAValue) -> ast.expr:
        """The expression tree of an already-translated value (records the read)."""
        return self.term(value).expr

    def read(self, expr: ast.expr) -> None:
        if self._chunk is not None:
            self._chunk.uses.update(n for n in syntax.names(expr) if n in self.locals)

    def bind(self, value: SSAValue, term: Term) -> Term:
        self.values[value] = term
        return term

    def name(self, value: SSAValue, default: str = "v") -> str:
        """A fresh local name for `value`, from its name hint."""
        name = self.namer.fresh(identifier(value.name_hint, default))
        self.locals.add(name)
        return name

    def temp(self) -> str:
        """A chunk-local temporary (never read across chunks)."""
        self.temps += 1
        return f"_t{self.temps}"

    def define(self, value: SSAValue, code: ast.expr, *, owned: bool = True, dtype: str | None = None) -> Term:
        """Emit `name = code` for `value`; returns its term."""
        name = self.name(value)
        self.statement(syntax.assign(name, code))
        return self.defined(value, name, owned=owned, dtype=dtype)

    def defined(self, value: SSAValue, name: str, *, owned: bool = True, dtype: str | None = None) -> Term:
        """Bind `value` to local `name`, which the current chunk assigns."""
        self.defines(name)
        term = Term(syntax.name(name), dtype or np_dtype(value.type), static_shape(value.type), owned and isinstance(value.type, TensorType))
        self.sized(name, term.dtype, term.shape)
        return self.bind(value, term)

    def sized(self, name: str, dtype: str, shape: tuple[int, ...] | None) -> None:
        """Record how large the array `name` holds is (`release` frees large ones where they die)."""
        if shape is None:
            self.sizes[name] = 0
        elif any(n < 0 for n in shape):
            self.sizes[name] = None
        else:
            self.sizes[name] = int(np.dtype(dtype).itemsize * prod(shape))

    def buffer(self, dtype: str, shape: tuple[int, ...] | None) -> ast.expr | None:
        """A buffer from the program's pool for a large result (`_pool.take(shape, dtype)`, written with `out=`);
        None for a scalar, a small array (malloc's bins reuse those) or a dynamic shape."""
        if shape is None or any(n < 0 for n in shape) or np.dtype(dtype).itemsize * prod(shape) < RELEASE_BYTES:
            return None
        self.module.pooled = True
        return syntax.call("_pool.take", syntax.tuple_(*shape), syntax.string(dtype))

    def large(self, name: str) -> bool:
        """Whether `name` may hold an array worth releasing early (unknown: yes)."""
        size = self.sizes.get(name)
        return size is None or size >= RELEASE_BYTES

    def dies_here(self, value: SSAValue, op: Operation) -> bool:
        """True when `op` is the only reader of `value` (and reads it once)."""
        uses = list(value.uses)
        return len(uses) == 1 and uses[0].operation is op

    def reusable(self, value: SSAValue, op: Operation) -> Term | None:
        """The term of `value` if `op` may overwrite it in place."""
        term = self.values.get(value)
        if term is not None and term.owned and self.dies_here(value, op):
            return term
        return None

    # ---- chunks

    @property
    def current(self) -> Chunk:
        """The chunk of the op being translated."""
        assert self._chunk is not None, "no op is being translated"
        return self._chunk

    def statement(self, node: ast.stmt) -> None:
        """Add a statement to the current chunk."""
        self.current.statements.append(node)

    def defines(self, *names: str) -> None:
        """Record that the current chunk assigns `names` (beyond what `define` records)."""
        self.current.defs += names

    def impure(self) -> None:
        self.current.pure = False

    def origin(self, op: Operation) -> str:
        attr = op.attributes.get(abi.ORIGIN)
        return attr.data if isinstance(attr, StringAttr) else self.label

    @contextmanager
    def chunk(self, op: Operation) -> Iterator[Chunk]:
        outer = self._chunk
        self._chunk = Chunk([], (), set(), self.origin(op), op.name)
        try:
            yield self._chunk
            self._blocks[-1].append(self._chunk)
        finally:
            self._chunk = outer

    def nested(self, header: str, block: Block, on_terminator: Callable[[Operation], None]) -> None:
        """Translate `block` as a nested Python block of the current chunk."""
        outer = self._chunk
        assert outer is not None
        self._blocks.append([])
        self._chunk = None
        try:
            self.translate_ops(block.ops, on_terminator)
        finally:
            inner = self._blocks.pop()
            self._chunk = outer
        outer.blocks.append((header, inner))

    def translate_ops(self, ops, on_terminator: Callable[[Operation], None] | None = None) -> None:
        """One chunk per op; a block's terminator goes to `on_terminator` (scf.yield, ...)."""
        for op in ops:
            with self.chunk(op):
                if on_terminator is not None and op.has_trait(IsTerminator):
                    on_terminator(op)
                else:
                    self.translate(op)

    def translate(self, op: Operation) -> None:
        fn = TRANSLATORS.get(type(op))
        if fn is None:
            raise op_error(op, "has no NumPy translation")
        fn(self, op)

    @property
    def chunks(self) -> list[Chunk]:
        return self._blocks[0]
