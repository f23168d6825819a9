"""Fuzz cases for Cortex's promise: bad input is one located diagnostic, never a traceback.

Mutation operators take the example `.mlir` files apart (truncate, delete,
duplicate, swap types and dimensions, corrupt numbers, rename SSA uses, nest,
insert stray characters); `classify` runs one text through `cortex.parse`,
`cortex-opt` (in process), lowering, upstream `mlir-opt` and the NumPy
emitter, and says what happened. Anything other than success or a
`CortexError` / exit status 1 is an internal error and raises `InternalError`.

`tests/test_fuzz.py` drives these with Hypothesis on a bounded budget in CI;
this file also runs a longer campaign and prints the counts:

    PYTHONPATH=... python3 tests/helpers/fuzz_cases.py --cases 2000 [--seed 1] [--mlir-opt] [--kinds ir,onnx,quant,layout,outputs]

(`--cases` per kind; every kind by default; the last line is the total of internal errors.)
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
        from cortex.backends.mlir.upstream import MlirToolError, verify_with_mlir_opt

        try:
            verify_with_mlir_opt(lowered)
        except MlirToolError as e:
            raise InternalError(f"mlir-opt rejects what cortex lowered: {e}") from None
    return "accepted"


# ---------------------------------------------------------------- beyond IR text
#
# The same promise for the other surfaces a user feeds: ONNX models (broken
# protobufs, attributes of any type, odd dimensions, short initializers),
# quantisation (degenerate, non-finite and mistyped calibration and weights),
# layout conversion (random pools and convolutions: the NHWC graph must compute
# what the NCHW one does) and output paths (devices, links, directories, an
# input named as the output). Each `*_case(rng)` makes one case and classifies
# it; anything but success or a one-line CortexError raises InternalError.


def _clean(error: BaseException, what: str) -> None:
    from cortex.errors import CortexError

    if not isinstance(error, CortexError):
        raise InternalError(f"{what} raised {type(error).__name__}: {error}\n{traceback.format_exc()}") from None
    message = str(error).strip()
    if not message or "\n" in message or "internal error" in message:
        raise InternalError(f"{what}: not one clean line: {message[:500]!r}")


ONNX_OPS = {
    "Relu": 1, "Sigmoid": 1, "Add": 2, "Mul": 2, "MatMul": 2, "Gemm": 3, "Conv": 3, "MaxPool": 1, "AveragePool": 1,
    "Reshape": 2, "Flatten": 1, "Softmax": 1, "ReduceSum": 2, "ReduceMax": 2, "Transpose": 1, "Gelu": 1,
    "BatchNormalization": 5, "Identity": 1, "Constant": 0,
}
ATTRIBUTE_VALUES: list[object] = [
    0, 1, -1, 2, 3, 2**40, -(2**62), 1.5, -0.0, float("nan"), "", "x", "SAME_UPPER", "VALID", b"\xff",
    [0], [1, 1], [2, 2], [1, 1, 1, 1], [0, 0, 5, 5], [-3, 4], [1.5, 2.0], ["a", "b"], [2**62, 1],
]


def onnx_model(rng: random.Random):
    """One random ONNX model: a node of a supported operator with random attributes, inputs and shapes."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    op = rng.choice(sorted(ONNX_OPS))
    rank = rng.choice([1, 2, 3, 4, 4, 4])
    shape = [rng.choice([0, 1, 2, 3, 4, 5]) for _ in range(rank)]
    if rng.random() < 0.1:
        shape[rng.randrange(rank)] = rng.choice([-5, 2**20, 2**40])
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    initializers = []
    names = ["x"]
    for k in range(1, ONNX_OPS[op] + rng.choice([-1, 0, 0, 0, 1])):
        dims = [rng.choice([1, 2, 3, 4]) for _ in range(rng.choice([1, 2, 4]))]
        dtype = rng.choice([np.float32, np.float32, np.int64])
        tensor = numpy_helper.from_array(np.ones(dims, dtype), f"w{k}")
        if rng.random() < 0.1:
            tensor.raw_data = tensor.raw_data[: rng.randrange(len(tensor.raw_data) + 1)]
        initializers.append(tensor)
        names.append(rng.choice([f"w{k}", f"w{k}", "", "x", "undefined"]))
    node = helper.make_node(op, names if op != "Constant" else [], rng.choice([["y"], ["y"], [], ["y", "z"]]), name="n")
    schema_attrs = sorted(onnx.defs.get_schema(op, 21).attributes) if op != "Identity" else []
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(schema_attrs + ["bogus"]) if schema_attrs else "bogus"
        value = rng.choice(ATTRIBUTE_VALUES)
        try:
            node.attribute.append(helper.make_attribute(name, value))
        except Exception:  # noqa: BLE001 - onnx.helper cannot type it (a list mixing types): skip it
            pass
    graph = helper.make_graph([node], "fuzz", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", rng.choice([11, 13, 17, 18, 20]))])


def corrupt_bytes(data: bytes, rng: random.Random) -> bytes:
    """A damaged serialisation: truncated, bytes flipped, or noise inserted."""
    how = rng.choice(["truncate", "flip", "insert", "empty"])
    if how == "empty" or not data:
        return b""
    if how == "truncate":
        return data[: rng.randrange(len(data))]
    raw = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if how == "flip":
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        else:
            raw.insert(rng.randrange(len(raw) + 1), rng.randrange(256))
    return bytes(raw)


def onnx_case(rng: random.Random) -> str:
    """Import (and if accepted, compile and run) a random or damaged ONNX model."""
    import numpy as np

    import cortex
    from cortex.frontends.onnx import from_onnx

    model = onnx_model(rng)
    source = corrupt_bytes(model.SerializeToString(), rng) if rng.random() < 0.4 else model
    try:
        module = from_onnx(source)
    except BaseException as e:  # noqa: BLE001 - classified
        _clean(e, "from_onnx")
        return "rejected"
    try:
        compiled = cortex.compile(module, entry="main", mode=None)
        fn = next(op for op in module.walk() if op.name == "func.func")
        args = [np.ones(a.type.get_shape(), np.float32) for a in fn.body.block.args]
        compiled(*args)
    except BaseException as e:  # noqa: BLE001 - classified
        _clean(e, "compiling or running the imported module")
        return "rejected-later"
    return "accepted"


def quant_case(rng: random.Random) -> str:
    """cortex.quantize with degenerate, non-finite or mistyped calibration data or weights."""
    import numpy as np

    import cortex
    from cortex.dialects.folding import constant_value
    from cortex.examples.small_cnn import ENTRY, build_small_cnn, small_cnn_inputs
    from cortex.semantics.values import numpy_to_dense

    module = build_small_cnn()
    good = small_cnn_inputs(2, seed=rng.randrange(1000))
    kind = rng.choice(["normal", "constant", "nonfinite", "shape", "type", "weight"])
    calibration: object = good
    if kind == "constant":
        calibration = [np.full_like(good[0], rng.choice([0.0, 1e5, 1e6, -1e30, 3e38]))] * 2
    elif kind == "nonfinite":
        bad = good[1].copy()
        bad.flat[rng.randrange(bad.size)] = rng.choice([np.nan, np.inf, -np.inf])
        calibration = [good[0], bad]
    elif kind == "shape":
        calibration = [np.ones((1, 2, 3), np.float32)]
    elif kind == "type":
        calibration = rng.choice([None, 5, "calib.npz", [("a",)], [None], {"arg0": 1}, [[1, 2]]])
    elif kind == "weight":
        for op in module.walk():
            if op.name == "cortex.constant" and rng.random() < 0.5:
                array = constant_value(op.results[0]).copy()
                array.flat[rng.randrange(array.size)] = rng.choice([np.nan, np.inf, 1e38, 0.0])
                op.properties["value"] = numpy_to_dense(array, op.properties["value"].type)
    try:
        qmodule, _ = cortex.quantize(module, calibration, entry=ENTRY)
        cortex.reference(qmodule, entry=ENTRY, mode=None)(good[0])
    except BaseException as e:  # noqa: BLE001 - classified
        _clean(e, f"quantize ({kind})")
        return "rejected"
    return "accepted"


def layout_case(rng: random.Random) -> str:
    """A random NCHW pool or conv graph through cortex-convert-layout: the same numbers, or left alone."""
    import numpy as np

    import cortex

    kind = rng.choice(["max_pool", "avg_pool", "conv2d"])
    k, s, d, size = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3), rng.randint(3, 8)
    pads = [rng.randint(0, k - 1) for _ in range(4)]
    out_h = (size + pads[0] + pads[2] - d * (k - 1) - 1) // s + 1
    out_w = (size + pads[1] + pads[3] - d * (k - 1) - 1) // s + 1
    t_in, t_out = f"tensor<1x2x{size}x{size}xf32>", f"tensor<1x2x{max(out_h, 0)}x{max(out_w, 0)}xf32>"
    props = (f"strides = array<i64: {s}, {s}>, pads = array<i64: {', '.join(map(str, pads))}>, "
             f"dilations = array<i64: {d}, {d}>")
    if kind == "conv2d":
        body = (f"  %w = cortex.constant dense<0.5> : tensor<2x2x{k}x{k}xf32>\n"
                f"  %p = cortex.conv2d %x, %w {{{props}}} : ({t_in}, tensor<2x2x{k}x{k}xf32>) -> {t_out}\n")
    else:
        body = f"  %p = cortex.{kind} %x {{kernel_shape = array<i64: {k}, {k}>, {props}}} : {t_in} -> {t_out}\n"
    text = f"func.func @main(%x: {t_in}) -> {t_out} {{\n{body}  func.return %p : {t_out}\n}}"
    try:
        module = cortex.parse(text)
        converted = module.clone()
        cortex.run_passes(converted, "cortex-convert-layout{layout=nhwc},canonicalize")
    except BaseException as e:  # noqa: BLE001 - classified
        _clean(e, "parse or convert-layout")
        return "rejected"
    x = np.random.default_rng(rng.randrange(2**16)).uniform(-2, 2, (1, 2, size, size)).astype(np.float32)
    (want,) = cortex.reference(module, entry="main", mode=None)(x)
    (got,) = cortex.reference(converted, entry="main", mode=None)(x)
    if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise InternalError(f"convert-layout changed the results of\n{text}")
    return "accepted"


def output_case(rng: random.Random) -> str:
    """An output written to a random kind of path: the path keeps its kind, or one OutputError says why not."""
    import os
    import stat

    from cortex.tools.atomic import OutputError, check_distinct, write_bytes_atomic

    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        video = base / "clip.avi"
        video.write_bytes(b"video")
        target = base / "out.bin"
        kind = rng.choice(["missing", "regular", "link", "dangling", "directory", "null", "full", "input", "hardlink"])
        if kind == "regular":
            target.write_bytes(b"old")
        elif kind == "link":
            (base / "real.bin").write_bytes(b"old")
            target.symlink_to(base / "real.bin")
        elif kind == "dangling":
            target.symlink_to(base / "made.bin")
        elif kind == "directory":
            target.mkdir()
        elif kind in ("null", "full"):
            try:
                os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if kind == "null" else 7))
            except OSError:
                return "skipped"
        elif kind == "input":
            target = rng.choice([video, base / "." / "clip.avi"])
        elif kind == "hardlink":
            os.link(video, target)
        before = os.lstat(target) if os.path.lexists(target) else None
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        try:
            check_distinct([("--out", str(target))], [("the input video", str(video))])
            write_bytes_atomic(target, data)
        except OutputError:
            if video.read_bytes() != b"video":
                raise InternalError(f"the input was damaged ({kind})") from None
            return "rejected"
        except BaseException as e:  # noqa: BLE001 - classified
            _clean(e, f"writing an output ({kind})")
            return "rejected"
        after = os.lstat(target)
        if before is not None and stat.S_IFMT(before.st_mode) != stat.S_IFMT(after.st_mode):
            raise InternalError(f"the output changed what {kind} path {target} is")
        if kind in ("input", "hardlink") or video.read_bytes() != b"video":
            raise InternalError(f"an output replaced the input ({kind})")
        if stat.S_ISREG(os.stat(target).st_mode) and Path(target).read_bytes() != data:
            raise InternalError(f"the output does not hold what was written ({kind})")
    return "accepted"


CASES: dict[str, Callable[[random.Random], str]] = {
    "onnx": onnx_case, "quant": quant_case, "layout": layout_case, "outputs": output_case,
}
"""The non-IR fuzz surfaces, by the name `--kinds` takes."""


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


def other_campaign(kind: str, cases: int, seed: int) -> collections.Counter:
    """`cases` cases of one non-IR surface (see CASES)."""
    rng = random.Random(f"{kind}-{seed}")
    counts: collections.Counter = collections.Counter()
    for _ in range(cases):
        case_seed = rng.randrange(2**32)
        try:
            counts[CASES[kind](random.Random(case_seed))] += 1
        except InternalError as e:
            counts["internal error"] += 1
            print(f"--- internal error ({kind}, case seed {case_seed}):\n{e}\n", file=sys.stderr)
        counts["tried"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500, help="cases per kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mlir-opt", action="store_true", help="check every accepted case with upstream mlir-opt")
    parser.add_argument("--kinds", default=",".join(["ir", *CASES]), help=f"comma-separated: ir,{','.join(CASES)}")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k != "ir" and k not in CASES]
    if unknown:
        parser.error(f"unknown kinds {unknown}")
    internal = 0
    for kind in kinds:
        if kind == "ir":
            counts = campaign(args.cases, args.seed, args.mlir_opt)
            clean = counts["rejected"] + counts["rejected-later"]
            print(
                f"ir: cases tried {counts['tried']}, clean errors {clean} (parse/verify {counts['rejected']}, "
                f"later {counts['rejected-later']}), accepted {counts['accepted']}"
                f"{' (mlir-opt checked)' if args.mlir_opt and shutil.which(str(MLIR_OPT)) else ''}, "
                f"internal errors {counts['internal error']}"
            )
        else:
            counts = other_campaign(kind, args.cases, args.seed)
            clean = counts["rejected"] + counts["rejected-later"]
            skipped = f", skipped {counts['skipped']} (no mknod here)" if counts["skipped"] else ""
            print(
                f"{kind}: cases tried {counts['tried']}, clean errors {clean}, accepted {counts['accepted']}{skipped}, "
                f"internal errors {counts['internal error']}"
            )
        internal += counts["internal error"]
    print(f"total internal errors {internal}")
    return 1 if internal else 0


if __name__ == "__main__":
    sys.exit(main())
