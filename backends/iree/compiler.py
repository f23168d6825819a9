"""The IREE backend's compile side: targets and their flags, the hand-over legalisation, the disk cache.

A lowered module's compilable functions (`cortex.backends.iree.outline_segments`)
are printed in MLIR's generic form and compiled by `iree.compiler` into one
VM flatbuffer (`.vmfb`); `cortex.runtime.iree_runtime` loads and calls it.
Only this file imports `iree.compiler` (84 MB, not needed to *run* a saved
module: the device check loads `.vmfb` files with the runtime alone).

Targets (`TARGETS`): `cpu` is IREE's `llvm-cpu` for this machine's CPU
(`--iree-llvmcpu-target-cpu=host`), run by the `local-sync` driver (measured
cheaper per call than `local-task`, and the frame-parallel engine's workers
are already the parallelism: `benchmarks/iree_vs_ort.py --calls`); `cpu-portable`
the same for any x86-64-v4 CPU (AVX-512: what the device check carries to the
GPU machine; x86-64-v3 code ran the large CNN an order of magnitude slower than v4
or host); `cuda` NVIDIA GPUs through PTX (`--iree-cuda-target=sm_80`: IREE 3.13
rejects sm_90 with "missing GPU target"; the driver JIT-compiles sm_80 PTX
for Hopper).

The module is handed over in MLIR's custom printed form: in the generic form
xDSL prints each named linalg op's region explicitly, and IREE then compiled
convolutions to scalar loops, 50 to 140 times slower (the figures:
benchmarks/README.md, "Figures behind the compiler's choices").

f64 is kept: IREE demotes f64 to f32 by default (and changes the function's
signature, with a warning); `--iree-input-demote-f64-to-f32=false` keeps the
types the lowered module says, so results match the NumPy backend.

For `cpu`, flags follow this CPU's features (`cpu_tuning_flags`): on AVX2
without AVX-512, convolutions are compiled as im2col + matmul (2x faster there;
AVX-512 keeps the direct code, already at ONNX Runtime's speed).

Both CPU targets compile matmul-class ops with data tiling (`DATA_TILING_FLAGS`:
packed operand layouts and IREE's mmt4d code; constant weights are packed at
compile time) through IREE's GlobalOptimization data-tiling path (IREE's suggested
dispatch-creation path miscompiles a batch matmul whose operand is produced by a
reduction: `DATA_TILING_FLAGS`), on the IREE versions it was measured with
(`version_flags`; the version is in the cache key); `CORTEX_IREE_DATA_TILING=0`
turns it off (`DATA_TILING_ENV`). A compiler that does not know an optional
flag (`OPTIONAL_FLAGS`) gets the module again without it: IREE's own choice.
On AVX-512 (the `cpu` target on such a CPU, and `cpu-portable`), convolutions get a
register tile of 32 output channels through a two-phase compile (`conv_channels`,
`cortex.backends.iree.conv_tile`); a phase that fails falls back to one compile
with IREE's own tile. The tile is in the cache key.

The cache: `<dir>/<key>.vmfb`, `key` = SHA-256 of the printed IR, the IREE
compiler version, the target and every flag the compiler gets (and, for `cpu`, this CPU's
model and feature flags, since `host` means a different CPU elsewhere). An
entry starts with a header line holding its key fields and the SHA-256 of
the module bytes; an entry whose header or checksum does not match (a
truncated write, another version's file, bit rot) is compiled again and
replaced, never loaded. Writes are atomic (temporary sibling + rename).
`CORTEX_IREE_CACHE` names the directory (default `~/.cache/cortex/iree`);
`CORTEX_IREE_CACHE=off` disables it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cortex.errors import CortexError
from cortex.ir import to_text


@dataclass(frozen=True)
class Target:
    """Where compiled code runs: the compiler's flags and the runtime's driver."""

    name: str
    flags: tuple[str, ...]
    driver: str
    host_specific: bool = False  # the code is for this machine's CPU: the cache key says which
    llvm_cpu: bool = False  # IREE's llvm-cpu backend: the CPU code flags of this IREE version apply

    def compiler_flags(self, flags: Sequence[str] = ()) -> tuple[str, ...]:
        """Every flag the compiler gets for this target (the cache key holds exactly these): the target's,
        the common ones, this IREE version's CPU code flags, this CPU's tuning where the code is for this
        CPU, then the caller's."""
        versioned = version_flags(compiler_version()) if self.llvm_cpu else ()
        tuning = cpu_tuning_flags(cpu_features()) if self.host_specific else ()
        return (*self.flags, *COMMON_FLAGS, *versioned, *tuning, *flags)


COMMON_FLAGS = ("--iree-input-demote-f64-to-f32=false",)

TARGETS: dict[str, Target] = {
    "cpu": Target("cpu", ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                          "--iree-llvmcpu-target-cpu=host"), "local-sync", host_specific=True, llvm_cpu=True),
    "cpu-portable": Target("cpu-portable", ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                                            "--iree-llvmcpu-target-cpu=x86-64-v4"), "local-sync", llvm_cpu=True),
    "cuda": Target("cuda", ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"), "cuda"),
}
DEVICES = {"cpu": "cpu", "cuda": "cuda"}
"""`device=` as users write it → target name."""


def target_named(name: str) -> Target:
    if name not in TARGETS:
        raise CortexError(f"unknown IREE target '{name}' (targets: {', '.join(TARGETS)})")
    return TARGETS[name]


def require_compiler():
    """`iree.compiler`, or a CortexError saying how to install it."""
    try:
        import iree.compiler as compiler
    except ImportError:
        raise CortexError(
            "the IREE backend needs the iree-base-compiler package: pip install 'cortex[iree]' "
            "(or: pip install 'iree-base-compiler==3.13.*' 'iree-base-runtime==3.13.*')"
        ) from None
    return compiler


@cache
def compiler_version() -> str:
    """The installed IREE compiler's version ("3.13.0rc20261016"), or "" without the compiler."""
    try:
        from iree.compiler import version
    except ImportError:
        return ""
    return str(version.VERSION)


def version_numbers(version: str) -> tuple[int, int]:
    """(major, minor) of an IREE version text; (0, 0) when it does not start with two numbers."""
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return 0, 0


DATA_TILING_FLAGS = ("--iree-global-opt-data-tiling",)
"""Matmul-class ops (`linalg.matmul`, batch matmuls; not convolutions) in packed layouts, run by IREE's mmt4d
code: an MLP's matmuls ran about three times faster; the CNNs' convolutions are untouched. With it the
weight's layout stops mattering (K×N and N×K ran alike: the constant is packed at compile time), so the
lowering's K×N stays.

The GlobalOptimization path, not `--iree-opt-data-tiling` (IREE 3.13 picks its DispatchCreation path for
that flag, `--iree-dispatch-creation-data-tiling`): the DispatchCreation path fuses the operand packing into
the producer's dispatch, and where the producer is a row reduction over a batch matmul's collapsed batch and
row dimensions (a softmax, `x - sum(x)` broadcast; batch 2 or 3 of 6×6 @ 6×8) it wrote the second batch's
packed rows wrong (the attention of a transformer block at batch 1). The GlobalOptimization path
packs in dispatches of their own, computes that case exactly and runs the MLP in the same time.
`tests/test_iree_flags.py` holds the reduced case. IREE's separate convolution data tiling
(`--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution`) made a 3-channel first convolution
several times slower and is not set. The figures: benchmarks/README.md, "Figures behind the compiler's choices"."""

DATA_TILING_SINCE = (3, 13)
"""The first IREE version data tiling was measured on; older compilers keep IREE's default."""

OPTIONAL_FLAGS = frozenset(DATA_TILING_FLAGS)
"""Flags a compiler may not know: a compile it refuses as an unknown argument is retried without them."""


PORTABLE_FEATURES = frozenset({"avx512f"})
"""What `cpu-portable`'s x86-64-v4 guarantees that the code's tuning looks at."""


def conv_channels(target: Target) -> int | None:
    """The output channels of the convolution register tile to set for `target`
    (`cortex.backends.iree.conv_tile`), None to keep IREE's choice: llvm-cpu targets on a measured IREE
    version whose CPU has a vector ISA in the table."""
    from cortex.backends.iree.conv_tile import TILED_SINCE, channels_per_tile

    if not target.llvm_cpu or version_numbers(compiler_version()) < TILED_SINCE:
        return None
    return channels_per_tile(cpu_features() if target.host_specific else PORTABLE_FEATURES)


DATA_TILING_ENV = "CORTEX_IREE_DATA_TILING"
"""`CORTEX_IREE_DATA_TILING=0` compiles matmuls without data tiling (IREE's default code), e.g. to compare."""


def version_flags(version: str) -> tuple[str, ...]:
    """The CPU code flags for IREE `version` on the llvm-cpu targets: data tiling where it was measured, unless
    `DATA_TILING_ENV` is "0"."""
    if os.environ.get(DATA_TILING_ENV) == "0":
        return ()
    return DATA_TILING_FLAGS if version_numbers(version) >= DATA_TILING_SINCE else ()


IM2COL_FLAGS = ("--iree-global-opt-use-im2col-for-convs",)
"""Convolutions as im2col + matmul. On the large CNN (`benchmarks/onnx_vs_ort.py --models cnn_large --untuned`, one thread), on
an AVX2 CPU without AVX-512 the im2col form (the 3-channel first conv kept direct, `legalized`) ran in half
the time of IREE's direct convolution code; on AVX-512 the direct code was already level with ONNX
Runtime. Data tiling, ukernels (`mmt4d`), O3, aggressive fusion and pad fusion gained nothing measurable
on top on AVX2 for that CNN. The figures: benchmarks/README.md, "Figures behind the compiler's choices"."""


@cache
def cpu_features() -> frozenset[str]:
    """This CPU's feature flags as /proc/cpuinfo names them (empty where it cannot be read: no tuning)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return frozenset()
    for line in lines:
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def cpu_tuning_flags(features: frozenset[str]) -> tuple[str, ...]:
    """The flags that make IREE's code faster on a CPU with `features`: im2col convolutions on AVX2 without
    AVX-512 (`IM2COL_FLAGS`); nothing elsewhere, where nothing was measured to pay."""
    return IM2COL_FLAGS if "avx2" in features and "avx512f" not in features else ()


@cache
def cpu_fingerprint() -> str:
    """This CPU's model and feature flags (what `--iree-llvmcpu-target-cpu=host` compiles for)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor() or platform.machine()
    wanted = [line for line in lines if line.startswith(("model name", "flags"))][:2]
    return hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:16]


# ---------------------------------------------------------------- legalisation


def legalized(module: ModuleOp, im2col: bool = False) -> ModuleOp:
    """A copy of `module` in the form IREE accepts and compiles well: constant pads as `tensor.pad` (IREE's CPU
    codegen fails on fill + insert_slice feeding an NCHW convolution), generic inputs cut to the extent their
    loops read (MLIR's verifier rejects a ceil-mode pool's longer padded input), NHWC pooling generics as the
    named `linalg.pooling_nhwc_max`/`_sum` (IREE runs the named ops 4-6x faster), `math.powf` as exp/log with
    pow's special cases (IREE's own expansion is NaN for negative bases: `cortex.backends.iree.expand_powf`), then
    DCE of the fills and empties left unused. With `im2col` (the flags compile convolutions as im2col + matmul),
    convolutions over few input channels become generics that IREE compiles direct, faster for them
    (`cortex.backends.iree.shallow_conv_generic`)."""
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    from cortex.backends.iree.crop_generic_inputs import CropGenericInputsPass
    from cortex.backends.iree.expand_powf import ExpandPowFPass
    from cortex.backends.iree.pad_as_tensor_pad import PadAsTensorPadPass
    from cortex.backends.iree.raise_pooling import RaisePoolingPass
    from cortex.backends.iree.shallow_conv_generic import ShallowConvGenericPass

    copy = module.clone()
    ctx = Context(allow_unregistered=True)
    passes: list[ModulePass] = [PadAsTensorPadPass(), CropGenericInputsPass(), RaisePoolingPass(), ExpandPowFPass()]
    if im2col:
        passes.append(ShallowConvGenericPass())
    for p in (*passes, DeadCodeElimination()):
        p.apply(ctx, copy)
    return copy


# ---------------------------------------------------------------- compiling, cached


HEADER = b"cortex-iree-cache 1\n"


def cache_dir() -> Path | None:
    value = os.environ.get("CORTEX_IREE_CACHE")
    if value == "off":
        return None
    return Path(value) if value else Path.home() / ".cache" / "cortex" / "iree"


def cache_fields(text: str, target: Target, flags: Sequence[str]) -> dict[str, str]:
    fields = {
        "ir": hashlib.sha256(text.encode()).hexdigest(),
        "iree": compiler_version(),
        "target": target.name,
        "flags": " ".join(target.compiler_flags(flags)),
    }
    if target.host_specific:
        fields["cpu"] = cpu_fingerprint()
    channels = conv_channels(target)
    if channels is not None:
        fields["conv_tile"] = str(channels)
    return fields


def cache_key(fields: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def pack_entry(fields: dict[str, str], payload: bytes) -> bytes:
    header = dict(fields, sha256=hashlib.sha256(payload).hexdigest())
    return HEADER + json.dumps(header, sort_keys=True).encode() + b"\n" + payload


def unpack_entry(data: bytes, fields: dict[str, str]) -> bytes | None:
    """The module bytes of a cache entry, or None unless its header and checksum match `fields`."""
    if not data.startswith(HEADER):
        return None
    header_line, sep, payload = data[len(HEADER) :].partition(b"\n")
    if not sep:
        return None
    try:
        header = json.loads(header_line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None
    if {k: v for k, v in header.items() if k != "sha256"} != fields or not payload:
        return None
    return payload


@dataclass
class CacheStats:
    hits: int = 0
    compiles: int = 0
    rebuilt: int = 0  # entries present but corrupt or stale


STATS = CacheStats()
"""Counts for this process (tests read them: a second compile of the same IR is a hit)."""


def compile_text(text: str, target: Target, flags: Sequence[str] = ()) -> bytes:
    """The `.vmfb` of MLIR `text` for `target` (from the disk cache when a valid entry is there)."""
    compiler = require_compiler()
    fields = cache_fields(text, target, flags)
    directory = cache_dir()
    path = directory / f"{cache_key(fields)}.vmfb" if directory is not None else None
    if path is not None and path.exists():
        try:
            payload = unpack_entry(path.read_bytes(), fields)
        except OSError:
            payload = None
        if payload is not None:
            STATS.hits += 1
            return payload
        STATS.rebuilt += 1
    payload = _compile_tiled(compiler, text, target, list(target.compiler_flags(flags)), conv_channels(target))
    STATS.compiles += 1
    if path is not None:
        _write_atomically(path, pack_entry(fields, bytes(payload)))
    return bytes(payload)


def _compile(compiler, text: str, target: Target, args: list[str]) -> bytes:
    """`iree.compiler.compile_str` with `args`, again without the optional flags it refuses as unknown."""
    try:
        return compiler.compile_str(text, extra_args=args)
    except compiler.CompilerToolError as e:
        message = str(e)
        unknown = {flag for flag in args if flag in OPTIONAL_FLAGS and f"Unknown command line argument '{flag}" in message}
        if not unknown:
            raise CortexError(f"IREE could not compile the module for '{target.name}': {_first_error(message)}") from None
    return _compile(compiler, text, target, [flag for flag in args if flag not in unknown])


def _compile_tiled(compiler, text: str, target: Target, args: list[str], channels: int | None) -> bytes:
    """`_compile`, in two phases with the convolutions' register tile set to `channels` output channels
    (`cortex.backends.iree.conv_tile.retile`); one phase, IREE's own tile, when `channels` is None or a
    phase fails."""
    from cortex.backends.iree.conv_tile import retile

    if channels is not None:
        try:
            configured = compiler.compile_str(text, extra_args=[*args, "--compile-to=executable-configurations"])
            edited, _ = retile(bytes(configured).decode(), channels)
            return compiler.compile_str(edited, extra_args=[*args, "--compile-from=executable-configurations"])
        except compiler.CompilerToolError:
            pass  # an unknown flag, a phase this version lacks, a tile it rejects: IREE's own choice below
    return _compile(compiler, text, target, args)


def legalized_for(module: ModuleOp, target: Target, flags: Sequence[str] = ()) -> ModuleOp:
    """`legalized(module)` as `target` compiles it (its flags decide whether convolutions go through im2col)."""
    return legalized(module, im2col=any(flag in IM2COL_FLAGS for flag in target.compiler_flags(flags)))


def compile_module(module: ModuleOp, target: Target, flags: Sequence[str] = ()) -> bytes:
    """Legalise `module` for IREE, print it (generic form) and compile it (cached)."""
    return compile_text(to_text(legalized_for(module, target, flags)), target, flags)


def _first_error(message: str) -> str:
    for line in message.splitlines():
        if "error:" in line:
            return line.strip()
    return " ".join(message.split())[:400]


def _write_atomically(path: Path, data: bytes) -> None:
    """Best effort: a cache that cannot be written only costs a compile next time."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


__all__ = [
    "DATA_TILING_ENV",
    "DATA_TILING_FLAGS",
    "DEVICES",
    "STATS",
    "TARGETS",
    "Target",
    "cache_dir",
    "compile_module",
    "compile_text",
    "conv_channels",
    "cpu_features",
    "cpu_tuning_flags",
    "legalized",
    "target_named",
    "version_flags",
]
