"""Fuzz cases for Cortex's promise: bad input is one located diagnostic, never a traceback.

Mutation operators take the example `.mlir` files apart (truncate, delete,
duplicate, swap types and dimensions, corrupt numbers, rename SSA uses, nest,
insert stray characters); `classify` runs one text through `cortex.parse`,
`cortex-opt` (in process), lowering, upstream `mlir-opt` and the NumPy
emitter, and says what happened. Anything other than success or a
`CortexError` / exit status 1 is an internal error and raises `InternalError`.

`tests/test_fuzz.py` drives these with Hypothesis on a bounded budget in CI;
this file also runs a longer campaign and prints the counts:

    PYTHONPATH=... python3 tests/helpers/fuzz_cases.py --cases 2000 [--seed 1] [--mlir-opt]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import random
import re
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/helpers/ → the repository
SEEDS: dict[str, str] = {p.stem: p.read_text() for p in sorted((ROOT / "examples").glob("*.mlir"))}
LOCATED = re.compile(r"^\S+:\d+:\d+: error: \S")
MLIR_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")

TYPES = ["f32", "f64", "f16", "i1", "i8", "i32", "i64", "ui8", "index"]
DIMS = ["0", "1", "2", "3", "?", "-1", "9000", "1099511627776"]
NUMBERS = ["0x7FC00000", "0x7F800000", "0xFF800000", "-1", "0", "1e999", "nan", "99999999999999999999", "0.5", "abc"]
NOISE = ["\ufeff", "\x00", "{", "}", "(", ")", "%", '"', "\u00e9", "\\", "@", "^bb0:", "//", "\n", ":", "->", "<", ">", "x"]
NUMBER_RE = re.compile(r"(?<![\w%@#.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")
DIM_RE = re.compile(r"(?<=[<x])(\d+|\?)(?=x)")
SSA_RE = re.compile(r"%[A-Za-z_][\w$.]*|%\d+")


class InternalError(AssertionError):
    """An input made Cortex fail with something other than a clean diagnostic."""


# ---------------------------------------------------------------- mutation operators


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def delete_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def delete_span(text: str, rng: random.Random) -> str:
    start = rng.randrange(len(text) + 1)
    return text[:start] + text[start + rng.randint(1, 24) :]


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _replace_match(text: str, pattern: re.Pattern, rng: random.Random, choices: list[str]) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + rng.choice(choices) + text[m.end() :]


def swap_type(text: str, rng: random.Random) -> str:
    return _replace_match(text, re.compile(r"\b(?:" + "|".join(TYPES) + r")\b"), rng, TYPES)


def change_dim(text: str, rng: random.Random) -> str:
    return _replace_match(text, DIM_RE, rng, DIMS)


def corrupt_number(text: str, rng: random.Random) -> str:
    return _replace_match(text, NUMBER_RE, rng, NUMBERS)


def rename_use(text: str, rng: random.Random) -> str:
    """Point one SSA use at another name: dominance, type and arity errors."""
    names = sorted(set(SSA_RE.findall(text)))
    return _replace_match(text, SSA_RE, rng, names) if names else text


def nest(text: str, rng: random.Random) -> str:
    depth = rng.choice([1, 2, 5, 40, 150, 1200])
    if rng.random() < 0.5:
        return "builtin.module {\n" * depth + text + "\n}" * depth
    inner = "scf.if %c {\n" * depth + "}\n" * depth
    return f"func.func @nested(%c: i1) {{\n{inner}func.return\n}}\n" + text


def insert_noise(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(NOISE) + text[at:]


MUTATORS: list[Callable[[str, random.Random], str]] = [
    truncate,
    delete_line,
    delete_span,
    duplicate_line,
    swap_lines,
    swap_type,
    change_dim,
    corrupt_number,
    rename_use,
    nest,
    insert_noise,
]


def mutate(seed: str, mutators: list[Callable[[str, random.Random], str]], rng: random.Random) -> str:
    text = SEEDS[seed]
    for mutator in mutators:
        text = mutator(text, rng)
    return text


# ---------------------------------------------------------------- running one case


def _cortex_opt(text: str, *argv: str) -> tuple[int, str]:
    """cortex-opt in process on `text` (written to a file): (exit status, stderr)."""
    from cortex.tools.cortex_opt import main

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.mlir"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main([str(path), *argv])
    return rc, err.getvalue()


def classify(text: str, mlir_opt: bool = False, cli: bool = True) -> str:
    """'rejected' (a clean located error), 'accepted' (parsed, lowered, emitted) or
    'rejected-later' (parsed, then a clean CortexError from lowering or the emitter).
    Raises InternalError otherwise."""
    import cortex
    from cortex.ir import CortexError

    try:
        module = cortex.parse(text)
    except CortexError as e:
        message = str(e)
        if not LOCATED.match(message) or "\n" in message:
            raise InternalError(f"parse rejected the input without one located line: {message!r}") from None
        verdict = "rejected"
    except BaseException as e:  # noqa: BLE001 - that is the point
        raise InternalError(f"cortex.parse raised {type(e).__name__}: {e}\n{traceback.format_exc()}") from None
    else:
        verdict = "accepted"

    if cli:
        rc, err = _cortex_opt(text)
        if rc not in (0, 1) or "Traceback" in err or "internal error" in err:
            raise InternalError(f"cortex-opt exited {rc}: {err[-2000:]}")
        if (rc == 1) != (verdict == "rejected"):
            raise InternalError(f"cortex-opt (exit {rc}) and cortex.parse ({verdict}) disagree: {err[:500]}")
        if rc == 1 and not LOCATED.match(err):
            raise InternalError(f"cortex-opt rejected the input without a location: {err[:500]}")
    if verdict == "rejected":
        return verdict

    try:
        lowered = cortex.lower(module)
        cortex.emit_numpy(lowered)
    except CortexError:
        return "rejected-later"
    except BaseException as e:  # noqa: BLE001
        raise InternalError(f"lowering or emitting raised {type(e).__name__}: {e}\n{traceback.format_exc()}") from None
    if mlir_opt and MLIR_OPT.exists():
        from cortex.lowering.upstream import MlirToolError, verify_with_mlir_opt

        try:
            verify_with_mlir_opt(lowered)
        except MlirToolError as e:
            raise InternalError(f"mlir-opt rejects what cortex lowered: {e}") from None
    return "accepted"


# ---------------------------------------------------------------- a campaign


def campaign(cases: int, seed: int, mlir_opt: bool) -> collections.Counter:
    rng = random.Random(seed)
    counts: collections.Counter = collections.Counter()
    for n in range(cases):
        name = rng.choice(sorted(SEEDS))
        mutators = [rng.choice(MUTATORS) for _ in range(rng.randint(1, 3))]
        text = mutate(name, mutators, rng)
        try:
            counts[classify(text, mlir_opt=mlir_opt and MLIR_OPT.exists(), cli=n % 4 == 0)] += 1
        except InternalError as e:
            counts["internal error"] += 1
            print(f"--- internal error ({name}, {[m.__name__ for m in mutators]}):\n{e}\n", file=sys.stderr)
        counts["tried"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mlir-opt", action="store_true", help="check every accepted case with upstream mlir-opt")
    args = parser.parse_args(argv)
    counts = campaign(args.cases, args.seed, args.mlir_opt)
    clean = counts["rejected"] + counts["rejected-later"]
    print(
        f"cases tried {counts['tried']}, clean errors {clean} (parse/verify {counts['rejected']}, "
        f"later {counts['rejected-later']}), accepted {counts['accepted']}"
        f"{' (mlir-opt checked)' if args.mlir_opt and shutil.which(str(MLIR_OPT)) else ''}, "
        f"internal errors {counts['internal error']}"
    )
    return 1 if counts["internal error"] else 0


if __name__ == "__main__":
    sys.exit(main())
