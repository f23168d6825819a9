# lit configuration for Cortex's FileCheck regression tests.
import os
import shutil
import sys

import lit.formats

config.name = "Cortex"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "Output"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

# Tools come from the active Python environment (pip install -e '.[test]').
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
for var in ("HOME", "PYTHONPATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# lit 23's internal shell runs its `diff` and `cat` builtins as Python scripts and, to do so, sets PYTHONPATH to
# lit's own folder on the environment that every later command of the same test shares (TestRunner.py:
# `cmd_shenv.env["PYTHONPATH"] = ...`). A `cortex-opt` after a `diff` then imported whatever `cortex` the
# interpreter found without PYTHONPATH: the editable install (another checkout) or none at all. So the tools
# and `%python` run through wrappers that restore the PYTHONPATH lit was started with (the tree under test).
_python = sys.executable
if "PYTHONPATH" in os.environ:
    _wrappers = os.path.join(config.test_exec_root, "bin")
    os.makedirs(_wrappers, exist_ok=True)
    _pinned = os.environ["PYTHONPATH"].replace("'", "'\\''")
    for _tool, _target in [("cortex-opt", os.path.join(bindir, "cortex-opt")), ("cortex-run", os.path.join(bindir, "cortex-run")),
                           ("cortex-import-onnx", os.path.join(bindir, "cortex-import-onnx")), ("python", sys.executable)]:
        _path = os.path.join(_wrappers, _tool)
        with open(_path, "w") as _f:
            _f.write(f"#!/bin/sh\nPYTHONPATH='{_pinned}' exec '{_target}' \"$@\"\n")
        os.chmod(_path, 0o755)
    config.environment["PATH"] = os.pathsep.join([_wrappers, config.environment["PATH"]])
    _python = os.path.join(_wrappers, "python")
config.substitutions.append(("%python", _python))
config.substitutions.append(("%examples", os.path.join(os.path.dirname(config.test_source_root), "examples")))

MLIR_BIN = "/usr/lib/llvm-22/bin"
if os.path.exists(os.path.join(MLIR_BIN, "mlir-opt")):
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", os.path.join(MLIR_BIN, "mlir-opt")))
if shutil.which("dot"):
    config.available_features.add("dot")

# The bundled pipeline is shape-generic (tensor<?x?x3xui8>); the tests that read its lowered or
# analysed form use the static 480x640 form, `build_l2_pipeline(480, 640)`, written once per run
# (same file name, same lines as the bundled file, so located diagnostics read alike).
_static_dir = os.path.join(config.test_exec_root, "static")
os.makedirs(_static_dir, exist_ok=True)
_static_l2 = os.path.join(_static_dir, "l2_pipeline.mlir")
import subprocess  # noqa: E402

subprocess.run(
    [sys.executable, "-c", "import cortex,sys; sys.stdout.write(cortex.to_text(cortex.build_l2_pipeline(480, 640)))"],
    stdout=open(_static_l2, "w"), check=True, env={**os.environ},
)
config.substitutions.insert(0, ("%l2_static", _static_l2))
