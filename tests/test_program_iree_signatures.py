"""An "iree" program's segment signatures in program.json are checked against the VM module's own declaration.

What held before: the argument and result types a saved program declared for each segment were believed; a
result declared 64×64 where the compiled function returns 3×4 was read past the end of IREE's buffer (heap
memory came back as results), a larger one crashed the process. Now loading compares each declared
signature with the one the module itself carries (IREE's ABI reflection) and a mismatch is one CortexError;
each call also checks a result's buffer against what it is read as.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE, small_l2_text
from helpers.program_archive import edited

import cortex
from cortex.errors import CortexError

pytestmark = pytest.mark.slow  # an IREE whole-program compile in its fixture: seconds

pytest.importorskip("iree.compiler", reason="the IREE backend is installed with cortex[iree]")

FRAMES = [np.full((96, 128, 3), 50 * i, np.uint8) for i in range(3)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        for name, value in EVERY_RUN_ON_IREE.items():  # the cost rule would keep this small L2 on the host
            patch.setenv(name, value)
        compiled = cortex.compile(cortex.parse(small_l2_text()), backend="iree")
    return compiled.save(tmp_path_factory.mktemp("iree") / "good.cortex").read_bytes()


def first_segment_with_a_2d_result(doc):
    for exe in doc["executables"].values():
        for symbol, signature in exe.get("meta", {}).get("segments", {}).items():
            if signature["results"] and signature["results"][0].count("x") == 2:
                return symbol, signature
    raise AssertionError("no segment returns a 2-D tensor")


@pytest.mark.slow
@pytest.mark.parametrize(("rewrite", "shape"), [("results", "64x64"), ("results", "4096x4096"), ("args", "2x2")])
def test_a_declared_signature_unlike_the_modules_is_refused(tmp_path, saved, rewrite, shape):
    def change(doc):
        _symbol, signature = first_segment_with_a_2d_result(doc)
        signature[rewrite][0] = "tensor<" + shape + "x" + signature[rewrite][0].rsplit("x", 1)[1]

    path = tmp_path / "p.cortex"
    path.write_bytes(edited(saved, change))
    # in a child process: the old runtime crashed on the large one
    script = (
        "import sys, numpy as np, cortex\n"
        "try:\n"
        f"    c = cortex.load({str(path)!r})\n"
        "    for i in range(3): c(np.full((96, 128, 3), 50 * i, np.uint8))\n"
        "except cortex.CortexError as e:\n"
        "    print('CortexError:', e); sys.exit(0)\n"
        "print('ran'); sys.exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    out = done.stdout.strip()
    assert out.startswith("CortexError:") and "does not match the compiled module's" in out, out
    assert "\n" not in out, out


def test_a_result_buffer_unlike_its_spec_is_refused_before_it_is_read():
    """The call's own check, below the load-time one: a SegmentCall told a 64×64 result for a 4-element one."""
    import iree.compiler as ic

    from cortex.runtime.iree_runtime import LoadedModule, SegmentCall, spec_of

    vmfb = ic.compile_str(
        "func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = arith.addf %x, %x : tensor<4xf32>\n  return %y : tensor<4xf32>\n}",
        target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=generic"])
    loaded = LoadedModule(vmfb, "local-sync")
    good = loaded.function("twice", ["tensor<4xf32>"], ["tensor<4xf32>"])
    np.testing.assert_array_equal(good(np.arange(4, dtype=np.float32))[0], 2 * np.arange(4, dtype=np.float32))
    lying = SegmentCall(loaded, "twice", good.vm_function, good.args, [spec_of("tensor<64x64xf32>", loaded.rt)])
    with pytest.raises(CortexError, match=r"^@twice: result 0 is tensor<4xf32>, not the tensor<64x64xf32> it is read as$"):
        lying(np.arange(4, dtype=np.float32))


@pytest.mark.slow
def test_the_untouched_iree_program_still_loads_and_runs(tmp_path, saved):
    path = tmp_path / "p.cortex"
    path.write_bytes(saved)
    a, b = cortex.load(path), cortex.load(path)
    for frame in FRAMES:
        for x, y in zip(a(frame), b(frame)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_an_edited_segment_signature_without_a_new_digest_is_refused(tmp_path, saved):
    source = zipfile.ZipFile(io.BytesIO(saved))
    files = {n: source.read(n) for n in source.namelist()}
    doc = json.loads(files["program.json"])
    first_segment_with_a_2d_result(doc)[1]["results"][0] = "tensor<64x64xf32>"
    files["program.json"] = json.dumps(doc).encode()
    path = tmp_path / "p.cortex"
    with zipfile.ZipFile(path, "w") as archive:
        for name, payload in files.items():
            archive.writestr(name, payload)
    with pytest.raises(CortexError, match="program.json does not match its SHA-256"):
        cortex.load(path)
