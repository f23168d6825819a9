"""A shared IREE cache never hands one machine's `host` code to another CPU.

The `cpu` target compiles for this machine's CPU (`--iree-llvmcpu-target-cpu=host`): code built on
an AVX-512 machine dies with SIGILL on one without it. A cache directory shared between machines
(a network home, a CI cache) must therefore key `cpu` entries by the CPU as well; `cpu-portable`
code runs on any x86-64-v4 CPU, so its entries are shared. Two machines are simulated by two CPU
fingerprints on one cache directory."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

from cortex.backends.iree import compiler as ic  # noqa: E402

TWICE = """
func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def on_machine(monkeypatch, fingerprint: str) -> None:
    monkeypatch.setattr(ic, "cpu_fingerprint", lambda: fingerprint)


def counts() -> tuple[int, int]:
    return ic.STATS.compiles, ic.STATS.hits


def test_host_code_is_compiled_again_for_another_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    target = ic.TARGETS["cpu"]
    on_machine(monkeypatch, "cpu-with-avx512")
    compiles, hits = counts()
    ic.compile_text(TWICE, target)
    ic.compile_text(TWICE, target)
    assert counts() == (compiles + 1, hits + 1)  # the same machine: a hit
    on_machine(monkeypatch, "cpu-without-avx512")
    ic.compile_text(TWICE, target)
    assert counts() == (compiles + 2, hits + 1), "another CPU was served the first CPU's cached host code"
    assert len(list(tmp_path.glob("*.vmfb"))) == 2


def test_portable_code_is_shared_between_cpus(tmp_path, monkeypatch):
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    target = ic.TARGETS["cpu-portable"]
    on_machine(monkeypatch, "cpu-one")
    compiles, hits = counts()
    first = ic.compile_text(TWICE, target)
    on_machine(monkeypatch, "cpu-two")
    assert ic.compile_text(TWICE, target) == first
    assert counts() == (compiles + 1, hits + 1)


def test_an_entry_written_for_another_cpu_is_not_read(tmp_path, monkeypatch):
    """Even at this CPU's key, an entry whose header names another CPU is rebuilt, not run."""
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    target = ic.TARGETS["cpu"]
    on_machine(monkeypatch, "this-cpu")
    fields = ic.cache_fields(TWICE, target, ())
    assert fields.get("cpu") == "this-cpu"
    path = tmp_path / f"{ic.cache_key(fields)}.vmfb"
    path.write_bytes(ic.pack_entry(dict(fields, cpu="other-cpu"), b"code for another cpu"))
    vmfb = ic.compile_text(TWICE, target)
    assert vmfb != b"code for another cpu"
    from xdsl.dialects.builtin import TensorType, f32

    from cortex.runtime.iree_runtime import LoadedModule

    t = TensorType(f32, [4])
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(LoadedModule(vmfb, "local-sync").function("twice", [t], [t])(x)[0], 2 * x)
