"""The `cpu` target's compiler flags follow this CPU's features, and the cache key follows the flags.

On an AVX2 CPU without AVX-512, IREE's direct convolution code ran the large CNN ~2x slower than its
im2col + matmul form (`benchmarks/onnx_vs_ort.py --models cnn_large --untuned`); on AVX-512 the direct code is already at
ONNX Runtime's speed, so the choice is keyed by the CPU's features. CPUs are simulated by
monkeypatching `cpu_features`; the compiler is replaced by a recorder where only its arguments matter."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

import iree.compiler  # noqa: E402

from cortex.backends.iree import compiler as ic  # noqa: E402

IM2COL = "--iree-global-opt-use-im2col-for-convs"
AVX2 = frozenset({"sse4_2", "avx", "avx2", "fma", "f16c"})
AVX512 = AVX2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"}

TWICE = """
func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def on_cpu(monkeypatch, features: frozenset[str]) -> None:
    monkeypatch.setattr(ic, "cpu_features", lambda: features)
    monkeypatch.setattr(ic, "cpu_fingerprint", lambda: "one-fingerprint")  # only the features differ


PHASES = ("--compile-to=executable-configurations", "--compile-from=executable-configurations")


def compiler_calls(monkeypatch, target: ic.Target, flags=()) -> list[tuple[str, list[str]]]:
    """The (input, arguments) of each IREE compiler call `compile_text` makes for `target` (cache off)."""
    seen: list[tuple[str, list[str]]] = []

    def record(text, extra_args=()):
        seen.append((text, list(extra_args)))
        return b"module"

    monkeypatch.setenv("CORTEX_IREE_CACHE", "off")
    monkeypatch.setattr(iree.compiler, "compile_str", record)
    ic.compile_text(TWICE, target, flags)
    return seen


def compiler_args(monkeypatch, target: ic.Target) -> list[str]:
    """The flags `compile_text` hands the IREE compiler for `target`, the same in every phase (cache off)."""
    calls = compiler_calls(monkeypatch, target)
    flag_sets = [[a for a in args if a not in PHASES] for _, args in calls]
    assert all(f == flag_sets[0] for f in flag_sets)
    return flag_sets[0]


def test_avx2_without_avx512_compiles_convolutions_as_im2col(monkeypatch):
    on_cpu(monkeypatch, AVX2)
    assert IM2COL in compiler_args(monkeypatch, ic.TARGETS["cpu"])


def test_avx512_keeps_direct_convolutions(monkeypatch):
    on_cpu(monkeypatch, AVX512)
    assert IM2COL not in compiler_args(monkeypatch, ic.TARGETS["cpu"])


def test_portable_target_ignores_this_cpu(monkeypatch):
    """`cpu-portable` is compiled for AVX-512 CPUs wherever it is built: this CPU's features do not matter."""
    on_cpu(monkeypatch, AVX2)
    avx2_args = compiler_args(monkeypatch, ic.TARGETS["cpu-portable"])
    on_cpu(monkeypatch, AVX512)
    assert compiler_args(monkeypatch, ic.TARGETS["cpu-portable"]) == avx2_args
    assert IM2COL not in avx2_args


def test_cache_key_holds_every_flag_the_compiler_gets(monkeypatch):
    target = ic.TARGETS["cpu"]
    keys = {}
    for name, features in (("avx2", AVX2), ("avx512", AVX512)):
        on_cpu(monkeypatch, features)
        args = compiler_args(monkeypatch, target)
        fields = ic.cache_fields(TWICE, target, ())
        assert fields["flags"].split() == args
        keys[name] = ic.cache_key(fields)
    assert keys["avx2"] != keys["avx512"]


@pytest.mark.slow
def test_im2col_code_matches_onnx_runtime(tmp_path, monkeypatch):
    """The AVX2 flags compile a CNN (3x3 convs, pooling, Gemm) to the same results, on any machine."""
    ort = pytest.importorskip("onnxruntime")
    import cortex
    from cortex.frontends.onnx_models import cnn, sample_input

    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    model = cnn()
    x = sample_input(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    model.ir_version = min(model.ir_version, 8)
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )
    got = {}
    for name, features in (("im2col", AVX2), ("direct", AVX512)):  # the flags only: the code is for this CPU
        monkeypatch.setattr(ic, "cpu_features", lambda features=features: features)
        got[name] = cortex.compile(cortex.from_onnx(model), backend="iree")(x)[0]
    assert len(list(tmp_path.glob("*.vmfb"))) >= 2  # two codes, two entries
    for name, y in got.items():
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6, err_msg=name)


def handed_over(tmp_path, monkeypatch, features: frozenset[str]) -> str:
    """The MLIR text the IREE backend compiles for the small CNN (3→8, 8→8, 8→16 channel convs) on a CPU."""
    import cortex
    from cortex.frontends.onnx_models import cnn

    on_cpu(monkeypatch, features)
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    texts: list[str] = []
    compile_text = ic.compile_text

    def record(text, target, flags=()):
        texts.append(text)
        return compile_text(text, target, flags)

    monkeypatch.setattr(ic, "compile_text", record)
    cortex.compile(cortex.from_onnx(cnn()), backend="iree")
    return "\n".join(texts)


CONV_INPUT_CHANNELS = r"ins\(%\S+, %\S+ : tensor<1x\d+x\d+x(\d+)xf32>, tensor<3x3x"


def conv_input_channels(text: str) -> tuple[list[int], list[int]]:
    """Input channels of the named convolutions and of the convolution generics in `text`."""
    import re

    named = [int(c) for c in re.findall(r"linalg\.conv_2d_nhwc_hwcf [^\n]*" + CONV_INPUT_CHANNELS, text)]
    generic = [int(c) for c in re.findall(r"linalg\.generic [^\n]*" + CONV_INPUT_CHANNELS, text)]
    return named, generic


@pytest.mark.slow
def test_shallow_convolutions_stay_direct_under_im2col(tmp_path, monkeypatch):
    """Under im2col, the 3-channel first conv is handed over as a generic (IREE's im2col pass skips it); the
    8-channel ones stay named. Without im2col every conv stays named."""
    named, generic = conv_input_channels(handed_over(tmp_path, monkeypatch, AVX2))
    assert set(named) == {8} and set(generic) == {3}
    named, generic = conv_input_channels(handed_over(tmp_path, monkeypatch, AVX512))
    assert set(named) == {3, 8} and not generic


@pytest.mark.slow
def test_printed_iree_module_is_the_one_compiled(tmp_path, monkeypatch):
    """`cortex-opt -t iree` prints the module the compiler is given: on an AVX2 CPU the shallow convolution is
    printed as the generic the compile receives, not as the named op."""
    import io

    import cortex
    from cortex.backends.iree.program import IreeTarget
    from cortex.driver import compile_program
    from cortex.frontends.onnx_models import cnn
    from cortex.ir import make_context

    named, generic = conv_input_channels(handed_over(tmp_path, monkeypatch, AVX2))
    lowered = compile_program(cortex.from_onnx(cnn()), backend="iree").lowered  # the cache serves the compile
    printed = io.StringIO()
    IreeTarget().emit(make_context(), lowered, printed)
    printed_named, printed_generic = conv_input_channels(printed.getvalue())
    assert (set(printed_named), set(printed_generic)) == (set(named), set(generic)) == ({8}, {3})


DATA_TILING = "--iree-global-opt-data-tiling"
DISPATCH_CREATION_PATHS = ("--iree-opt-data-tiling", "--iree-dispatch-creation-data-tiling")
"""IREE 3.13's suggested data tiling (`--iree-opt-data-tiling` picks the DispatchCreation path) miscompiles
`REDUCED_BATCH_MATMUL`; Cortex's flags never hold it."""


@pytest.mark.parametrize("target", ["cpu", "cpu-portable"])
def test_cpu_targets_data_tile_matmuls_on_the_measured_version(monkeypatch, target):
    """A default: no environment variable asks for it."""
    monkeypatch.delenv(ic.DATA_TILING_ENV, raising=False)
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0rc20261016")
    args = compiler_args(monkeypatch, ic.TARGETS[target])
    assert DATA_TILING in args
    assert not set(DISPATCH_CREATION_PATHS) & set(args)


def test_data_tiling_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(ic.DATA_TILING_ENV, "0")
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0")
    assert DATA_TILING not in compiler_args(monkeypatch, ic.TARGETS["cpu"])


REDUCED_BATCH_MATMUL = """
func.func @f(%x: tensor<BATCHx6x6xf32>, %v: tensor<BATCHx6x8xf32>) -> tensor<BATCHx6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<BATCHx6xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<BATCHx6xf32>) -> tensor<BATCHx6xf32>
  %sum = linalg.reduce ins(%x : tensor<BATCHx6x6xf32>) outs(%s0 : tensor<BATCHx6xf32>) dimensions = [2]
    (%a: f32, %b: f32) {
      %m = arith.addf %a, %b : f32
      linalg.yield %m : f32
    }
  %e2 = tensor.empty() : tensor<BATCHx6x6xf32>
  %centred = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>,
                                              affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                             iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %sum : tensor<BATCHx6x6xf32>, tensor<BATCHx6xf32>) outs(%e2 : tensor<BATCHx6x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<BATCHx6x6xf32>
  %e3 = tensor.empty() : tensor<BATCHx6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<BATCHx6x8xf32>) -> tensor<BATCHx6x8xf32>
  %r = linalg.batch_matmul ins(%centred, %v : tensor<BATCHx6x6xf32>, tensor<BATCHx6x8xf32>)
                           outs(%f : tensor<BATCHx6x8xf32>) -> tensor<BATCHx6x8xf32>
  return %r : tensor<BATCHx6x8xf32>
}
"""
"""The reduced form of a transformer block's attention (softmax, then the batch matmul with the values): a
row reduction feeding a batch matmul. With `--iree-opt-data-tiling` IREE 3.13 got batch 2 and 3 wrong (the
second batch's rows), the block itself at batch 1 (two heads); batch 1, 4, 5, 8 and 16 came out right."""


@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, 2, 3, 4])
def test_data_tiled_batch_matmul_after_a_row_reduction_is_exact(monkeypatch, batch):
    import iree.runtime as rt

    monkeypatch.delenv(ic.DATA_TILING_ENV, raising=False)
    monkeypatch.setenv("CORTEX_IREE_CACHE", "off")
    assert DATA_TILING in ic.TARGETS["cpu"].compiler_flags()
    vmfb = ic.compile_text(REDUCED_BATCH_MATMUL.replace("BATCH", str(batch)), ic.TARGETS["cpu"])
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 6, 6)).astype(np.float32)
    v = rng.standard_normal((batch, 6, 8)).astype(np.float32)
    got = np.asarray(context.modules.module.f(x, v))
    np.testing.assert_allclose(got, (x - x.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5)


def test_older_compilers_keep_their_own_choice(monkeypatch):
    """A version before the one data tiling was measured on gets IREE's default, and another cache entry."""
    target = ic.TARGETS["cpu"]
    keys = {}
    for version in ("3.12.1", "3.13.0"):
        monkeypatch.setattr(ic, "compiler_version", lambda version=version: version)
        args = compiler_args(monkeypatch, target)
        assert (DATA_TILING in args) == (version == "3.13.0")
        keys[version] = ic.cache_key(ic.cache_fields(TWICE, target, ()))
    assert keys["3.12.1"] != keys["3.13.0"]


def test_gpu_target_gets_no_cpu_code_flags(monkeypatch):
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0")
    assert DATA_TILING not in ic.TARGETS["cuda"].compiler_flags()


@pytest.mark.parametrize("text, numbers", [("3.13.0rc20261016", (3, 13)), ("4.0", (4, 0)), ("", (0, 0)), ("dev", (0, 0))])
def test_version_numbers(text, numbers):
    assert ic.version_numbers(text) == numbers


def refusing(monkeypatch, unknown: str) -> list[list[str]]:
    """A compiler that refuses `unknown` as an unknown argument, as iree-compile does; the argument lists it got."""
    import subprocess

    seen: list[list[str]] = []

    def compile_str(text, extra_args=()):
        seen.append(list(extra_args))
        if any(a.startswith(unknown) for a in extra_args):
            stderr = f"iree-compile: Unknown command line argument '{unknown}'.  Try: 'iree-compile --help'\n".encode()
            raise iree.compiler.CompilerToolError(subprocess.CompletedProcess(["iree-compile"], 1, b"", stderr))
        return b"module"

    monkeypatch.setenv("CORTEX_IREE_CACHE", "off")
    monkeypatch.setattr(iree.compiler, "compile_str", compile_str)
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0")
    on_cpu(monkeypatch, AVX2)  # one phase: no convolution tile to set
    return seen


def test_an_unknown_optional_flag_falls_back_to_iree_s_choice(monkeypatch):
    seen = refusing(monkeypatch, DATA_TILING)
    assert ic.compile_text(TWICE, ic.TARGETS["cpu"]) == b"module"
    assert [DATA_TILING in args for args in seen] == [True, False]
    assert [a for a in seen[0] if a != DATA_TILING] == seen[1]


def test_an_unknown_flag_of_the_caller_is_an_error(monkeypatch):
    seen = refusing(monkeypatch, "--no-such-flag")
    with pytest.raises(ic.CortexError, match="Unknown command line argument '--no-such-flag'"):
        ic.compile_text(TWICE, ic.TARGETS["cpu"], ("--no-such-flag",))
    assert len(seen) == 1


@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, 32])
def test_data_tiled_mlp_matches_onnx_runtime(tmp_path, monkeypatch, batch):
    """Gemm (transB) + ReLU layers compiled with data tiling agree with ONNX Runtime within 1e-4 relative."""
    ort = pytest.importorskip("onnxruntime")
    import cortex
    from cortex.frontends.onnx_models import mlp, sample_input

    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    model = mlp(sizes=(96, 160, 64, 10), batch=batch)
    x = sample_input(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    model.ir_version = min(model.ir_version, 8)
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert DATA_TILING in ic.TARGETS["cpu"].compiler_flags()
    (got,) = cortex.compile(cortex.from_onnx(model), backend="iree")(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


CONFIGURED = """
  hal.executable private @conv_dispatch_0 {
      %7 = linalg.generic {iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} {lowering_config = #iree_cpu.lowering_config<distribution = [0, 4, 32, 64, 0, 0, 0], vector_common_parallel = [1, 1, 8, 16, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 8]>}
      %8 = linalg.generic {lowering_config = #iree_cpu.lowering_config<vector_common_parallel = [1, 1, 8, 16]>}
  }
  hal.executable private @conv_dispatch_1 {
      %7 = linalg.generic {iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} {lowering_config = #iree_cpu.lowering_config<distribution = [0, 16, 64, 16, 0, 0, 0], vector_common_parallel = [1, 1, 8, 16, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 3]>}
      %8 = linalg.generic {lowering_config = #iree_cpu.lowering_config<vector_common_parallel = [1, 1, 8, 16]>}
  }
  hal.executable private @add_dispatch_2 {
      %8 = linalg.generic {lowering_config = #iree_cpu.lowering_config<vector_common_parallel = [1, 1, 8, 16]>}
  }
"""


def test_retile_widens_the_convolution_tile_where_the_channels_allow():
    from cortex.backends.iree.conv_tile import retile

    edited, changed = retile(CONFIGURED, 32)
    assert changed == 1
    first, second, third = edited.split("hal.executable private")[1:]
    assert "vector_common_parallel = [1, 1, 8, 32, 0, 0, 0]" in first and "[1, 1, 8, 32]>" in first and "16]" not in first
    assert second == CONFIGURED.split("hal.executable private")[2]  # 16 channels: not a multiple of 32
    assert third == CONFIGURED.split("hal.executable private")[3]  # no convolution
    assert retile(CONFIGURED, 128) == (CONFIGURED, 0)


def test_channels_per_tile_follows_the_vector_isa():
    from cortex.backends.iree.conv_tile import channels_per_tile

    assert channels_per_tile(AVX512) == 32
    assert channels_per_tile(AVX2) is None and channels_per_tile(frozenset()) is None


def test_avx512_compiles_in_two_phases_with_the_wider_tile(monkeypatch):
    on_cpu(monkeypatch, AVX512)
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0")
    seen: list[tuple[str, list[str]]] = []

    def compile_str(text, extra_args=()):
        seen.append((text, list(extra_args)))
        return CONFIGURED.encode() if PHASES[0] in extra_args else b"module"

    monkeypatch.setenv("CORTEX_IREE_CACHE", "off")
    monkeypatch.setattr(iree.compiler, "compile_str", compile_str)
    assert ic.compile_text(TWICE, ic.TARGETS["cpu"]) == b"module"
    (first_text, first_args), (second_text, second_args) = seen
    assert first_text == TWICE and first_args[-1] == PHASES[0] and second_args[-1] == PHASES[1]
    assert second_text.count("vector_common_parallel = [1, 1, 8, 32, 0, 0, 0]") == 1


@pytest.mark.parametrize("features, version, phases", [(AVX2, "3.13.0", 1), (AVX512, "3.12.0", 1), (AVX512, "3.13.0", 2)])
def test_the_tile_is_set_on_measured_isas_and_versions_only(monkeypatch, features, version, phases):
    on_cpu(monkeypatch, features)
    monkeypatch.setattr(ic, "compiler_version", lambda: version)
    assert len(compiler_calls(monkeypatch, ic.TARGETS["cpu"])) == phases
    assert ("conv_tile" in ic.cache_fields(TWICE, ic.TARGETS["cpu"], ())) == (phases == 2)


def test_a_failing_phase_falls_back_to_one_compile(monkeypatch):
    """A compiler without the phases (or refusing the edited tile) compiles the module in one go."""
    import subprocess

    on_cpu(monkeypatch, AVX512)
    monkeypatch.setattr(ic, "compiler_version", lambda: "3.13.0")
    seen: list[list[str]] = []

    def compile_str(text, extra_args=()):
        seen.append(list(extra_args))
        if any(a in PHASES for a in extra_args):
            stderr = b"iree-compile: for the --compile-to option: Cannot find option named 'executable-configurations'!\n"
            raise iree.compiler.CompilerToolError(subprocess.CompletedProcess(["iree-compile"], 1, b"", stderr))
        return b"module"

    monkeypatch.setenv("CORTEX_IREE_CACHE", "off")
    monkeypatch.setattr(iree.compiler, "compile_str", compile_str)
    assert ic.compile_text(TWICE, ic.TARGETS["cpu"]) == b"module"
    assert len(seen) == 2 and not any(a in PHASES for a in seen[1])


@pytest.mark.slow
def test_retiled_cnn_matches_onnx_runtime(tmp_path, monkeypatch):
    """The 128x128 CNN (convolutions of 16 to 128 channels) compiled with the 32-channel tile agrees with
    ONNX Runtime within 1e-4 relative, and its tile was set (the second phase got the edited configuration)."""
    ort = pytest.importorskip("onnxruntime")
    import cortex
    from cortex.frontends.onnx_models import cnn_large, sample_input

    on_cpu(monkeypatch, AVX512 | ic.cpu_features())  # the code is for this CPU: only the tuning table is forced
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    phases: list[str] = []
    compile_str = iree.compiler.compile_str

    def record(text, extra_args=()):
        if PHASES[1] in extra_args:
            phases.append(text)
        return compile_str(text, extra_args=extra_args)

    monkeypatch.setattr(iree.compiler, "compile_str", record)
    model = cnn_large()
    x = sample_input(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    model.ir_version = min(model.ir_version, 8)
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    (got,) = cortex.compile(cortex.from_onnx(model), backend="iree")(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert phases and all("vector_common_parallel = [1, 1, 8, 32, 0, 0, 0]" in configured for configured in phases)
