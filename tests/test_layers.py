"""The package's levels form a DAG: every import, including those inside functions, runs downward.

`LAYERS` is the declared order, bottom first. A module may import modules of
its own unit (the same folder) and of any unit in a lower layer, never one in
its own layer or above. The graph is read from the source with `ast`, so an
import hidden inside a function counts, and so does a module named as a string
to `import_module` when the string is a literal `cortex.` path (the pass
registry's tables name their modules that way). No two modules import each
other, with one exception, xDSL's: a canonicalisation trait's pattern method
imports the patterns that name the ops carrying it (`PATTERN_METHODS`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.levels import LAYERS, ROOT, declared_layers, package_modules, unit_name


def unit_of(module: str) -> str:
    """The declared unit a dotted module name belongs to (its longest declared prefix)."""
    units = [u for layer in LAYERS for u in layer]
    best = max((u for u in units if module == u or module.startswith(u + ".")), key=len, default=None)
    if best is None:
        raise AssertionError(f"module {module} belongs to no declared layer: add its folder to LAYERS")
    return best


def layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def imported_modules(path: Path, module: str, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) of every cortex import in the file, at any depth, plus string literals naming a module."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])])
            found.append((node.lineno, base))
            # `from cortex.backends.numpy import arith` imports the submodule
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cortex."):
            if node.value in modules:  # a module named for import_module, not an op name like "cortex.add"
                found.append((node.lineno, node.value))
    return sorted({(line, m) for line, m in found if m == "cortex" or m.startswith("cortex.")})


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module `name` refers to (a module, or the module defining the imported name)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def backward_edges(root: Path = ROOT) -> list[str]:
    modules = package_modules(root)
    bad: list[str] = []
    for module, path in modules.items():
        source_unit = unit_of(module)
        for line, target_name in imported_modules(path, module, modules):
            target = resolve(target_name, modules)
            if target is None:
                continue
            target_unit = unit_of(target)
            if target_unit == source_unit:
                continue
            where = f"{path.relative_to(root)}:{line}: "
            if layer_of(target_unit) >= layer_of(source_unit) and not any(b.startswith(where) for b in bad):
                bad.append(f"{path.relative_to(root)}:{line}: {module} imports {target} ({source_unit} may not depend on {target_unit})")
    return bad


def test_every_module_has_a_layer():
    for module in package_modules():
        unit_of(module)


def test_the_levels_table_names_every_top_level_module_and_folder():
    """Nothing falls into the root API's level unnoticed: each top-level .py file and package folder has a row."""
    declared = {u for layer in LAYERS for u in layer}
    top = {unit_name(p.name + ("/" if p.is_dir() else "")) for p in ROOT.iterdir() if not p.name.startswith((".", "_")) or p.name == "__init__.py"}
    python = {u for u in top if (ROOT / u.removeprefix("cortex.")).with_suffix(".py").exists() or (ROOT / u.removeprefix("cortex.") / "__init__.py").exists()}
    assert python - {"cortex"} <= declared, f"add a row to README.md's levels table for: {sorted(python - declared - {'cortex'})}"
    assert {"cortex", "cortex.errors", "cortex.driver"} <= declared


def test_the_levels_table_is_what_the_test_reads():
    """The parser on a small table: levels group units, '—' rows are outside the package."""
    layers, outside = declared_layers(
        "| level | folder | x |\n|---|---|---|\n| 0 | `errors.py` | a |\n| 1 | `semantics/` | b |\n"
        "| 1 | `video/` | c |\n| 2 | `__init__.py` | d |\n| — | `tests/`, `lit/` | e |\n"
    )
    assert layers == [["cortex.errors"], ["cortex.semantics", "cortex.video"], ["cortex"]]
    assert outside == ["tests", "lit"]


def test_imports_run_downward():
    bad = backward_edges()
    assert not bad, "imports against the declared layer order:\n" + "\n".join(bad)


COMPILER = ("cortex.dialects", "cortex.passes", "cortex.lowering", "cortex.linalg_opt", "cortex.backends", "cortex.registry",
            "cortex.driver", "cortex.ir")
"""What the runtime must run without: the dialect, the passes, the lowering, the emitter, the driver (and IR parsing)."""


def runtime_imports_of_the_compiler(root: Path = ROOT) -> list[str]:
    modules = package_modules(root)
    bad = []
    for module, path in modules.items():
        if unit_of(module) != "cortex.runtime":
            continue
        for line, name in imported_modules(path, module, modules):
            target = resolve(name, modules)
            said = f"{path.relative_to(root)}:{line}: {module} imports {target}"
            if target is not None and (target == "cortex" or unit_of(target) in COMPILER) and said not in bad:
                bad.append(said)
    return bad


def test_the_runtime_never_imports_the_compiler():
    """Compile once, run anywhere the runtime is installed: no runtime module reaches the compiler."""
    assert not runtime_imports_of_the_compiler(), "\n".join(runtime_imports_of_the_compiler())
    assert [m for m in package_modules() if unit_of(m) == "cortex.runtime"], "no runtime modules found"


@pytest.mark.parametrize(
    "source, statement",
    [
        ("runtime/pipeline.py", "    from cortex.driver import compile"),
        ("runtime/threads.py", "from cortex.passes.frame_split import split_entry"),
        ("runtime/engines/ray.py", "    import cortex.lowering"),
        ("runtime/engines/processes/pool.py", "from cortex.driver import compile"),
        ("runtime/parts.py", "from cortex.backends.numpy.emitter import emit"),
        ("runtime/values.py", "from cortex.dialects.abi import Port"),
    ],
)
def test_a_runtime_import_of_the_compiler_is_caught(tmp_path, source, statement):
    copy = _copy_package(tmp_path)
    _plant(copy / source, statement)
    bad = runtime_imports_of_the_compiler(copy)
    assert len(bad) == 1 and bad[0].startswith(source), bad


def imports_xdsl(path: Path) -> list[int]:
    """The lines of `path` that import xDSL (at any depth)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        if any(n == "xdsl" or n.startswith("xdsl.") for n in names):
            lines.append(node.lineno)
    return lines


def runtime_reaches_xdsl(root: Path = ROOT) -> list[str]:
    """Every module the runtime imports, directly or through others (inside functions too), that imports xDSL."""
    graph, modules = import_graph(root), package_modules(root)
    reached = [m for m in graph if unit_of(m) == "cortex.runtime"]
    seen = set(reached)
    while reached:
        for target in graph[reached.pop()] - seen:
            seen.add(target)
            reached.append(target)
    return [f"{modules[m].relative_to(root)}:{line}: imports xDSL" for m in sorted(seen) for line in imports_xdsl(modules[m])]


def test_the_runtime_reaches_no_xdsl():
    """The runtime runs where xDSL is not installed: nothing it imports, however indirectly, imports xDSL."""
    assert not runtime_reaches_xdsl(), "\n".join(runtime_reaches_xdsl())


@pytest.mark.parametrize(
    "source, statement",
    [
        ("semantics/abi_facts.py", "from xdsl.ir import Attribute"),
        ("semantics/vision_kernels.py", "    import xdsl.dialects.builtin"),
        ("runtime/values.py", "    from cortex.semantics.values import numpy_dtype"),  # a level-1 module that imports xDSL
    ],
)
def test_an_xdsl_import_the_runtime_reaches_is_caught(tmp_path, source, statement):
    copy = _copy_package(tmp_path)
    _plant(copy / source, statement)
    bad = runtime_reaches_xdsl(copy)
    assert bad and all(b.startswith("semantics/") for b in bad), bad
    assert source.startswith("runtime/") or any(b.startswith(source) for b in bad), bad


CANONICALIZATION_TRAIT = "HasCanonicalizationPatternsTrait"
PATTERN_METHODS = frozenset({"get_patterns", "get_canonicalization_patterns"})
"""xDSL's one idiom for a deferred import: a canonicalisation trait's method imports the patterns that name
the ops carrying the trait (xDSL's arith does the same). It runs when `canonicalize` asks, never at import."""


def deferred_pattern_imports(tree: ast.Module) -> set[int]:
    """The ids of the import nodes inside a `HasCanonicalizationPatternsTrait` subclass's pattern methods."""
    skipped: set[int] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or not any(ast.unparse(b).endswith(CANONICALIZATION_TRAIT) for b in cls.bases):
            continue
        for method in cls.body:
            if isinstance(method, ast.FunctionDef) and method.name in PATTERN_METHODS:
                skipped |= {id(n) for n in ast.walk(method) if isinstance(n, ast.Import | ast.ImportFrom)}
    return skipped


def file_imports(path: Path, module: str, modules: dict[str, Path], deferred: bool = True) -> set[str]:
    """The package modules whose file `path` imports (at any depth): `from p import m` names submodule `m`
    (not `p`'s `__init__`) when `m` is a module, `p` otherwise; a literal module name counts too.
    `deferred=False` leaves out a canonicalisation trait's deferred import of its patterns."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    skipped = set() if deferred else deferred_pattern_imports(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])])
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
            found.add(node.value)
    resolved = {resolve(name, modules) for name in found if name == "cortex" or name.startswith("cortex.")}
    return {m for m in resolved if m is not None and m not in (module, "cortex")}


def import_graph(root: Path = ROOT, deferred: bool = True) -> dict[str, set[str]]:
    """File-level import graph: module → the package modules it imports (at any depth in the file)."""
    modules = package_modules(root)
    return {module: file_imports(path, module, modules, deferred) for module, path in modules.items()}


def import_cycles(root: Path = ROOT) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each as a cycle through it; a
    canonicalisation trait's deferred import of its patterns is no edge (`PATTERN_METHODS`)."""
    graph = import_graph(root, deferred=False)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # iterative enough for ~150 modules: recursion depth is the longest import chain
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def test_no_two_modules_import_each_other():
    """No import cycle between files, directly (a ↔ b) or in a circle (a → b → c → a), inside functions too."""
    cycles = import_cycles()
    assert not cycles, "modules that import each other:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_a_planted_cycle_is_caught(tmp_path):
    copy = _copy_package(tmp_path)
    _plant(copy / "runtime/values.py", "    from cortex.runtime.pipeline import LoadedProgram")
    cycles = import_cycles(copy)
    assert len(cycles) == 1 and {"cortex.runtime.pipeline", "cortex.runtime.values"} <= set(cycles[0]), cycles


def test_only_a_canonicalisation_traits_pattern_method_may_import_back(tmp_path):
    """The deferred import of the patterns in `CortexCanonicalization.get_patterns` is no cycle; the same
    import anywhere else in the trait's module (a plain function, another method) is one."""
    copy = _copy_package(tmp_path)
    traits = copy / "dialects/canonicalization_traits.py"
    assert "from cortex.dialects.canonicalization import" in traits.read_text()
    assert not import_cycles(copy)
    text = traits.read_text()
    traits.write_text(text.replace("    def get_patterns(", "    def patterns_of(", 1))
    assert any("cortex.dialects.canonicalization_traits" in c for c in import_cycles(copy))
    traits.write_text(text)
    _plant(traits, "    from cortex.dialects.folding import fold")
    assert any("cortex.dialects.canonicalization_traits" in c for c in import_cycles(copy))


def test_video_depends_only_on_the_leaf():
    modules = package_modules()
    for module, path in modules.items():
        if unit_of(module) != "cortex.video":
            continue
        for line, name in imported_modules(path, module, modules):
            target = resolve(name, modules)
            assert target is None or unit_of(target) in ("cortex.video", "cortex.errors", "cortex"), f"{module}:{line} imports {target}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, statement",
    [
        ("semantics/kernels.py", "from cortex.dialects.tensor_ops import AddOp"),  # a kernel importing the dialect
        ("dialects/folding.py", "    from cortex.backends.numpy.emitter import emit"),  # hidden inside a function
        ("video/source.py", "from cortex.examples.l2_pipeline import build_l2_pipeline"),
        ("semantics/values.py", "from cortex.video import synthetic"),  # same layer, another unit
        ("passes/registry_like.py", '    TABLE = {"x": ("cortex.lowering.cortex_to_linalg", "P")}'),
    ],
)
def test_a_backward_import_is_caught(tmp_path, source, statement):
    """The checker itself: planting one backward import makes it report exactly that edge."""
    copy = _copy_package(tmp_path)
    _plant(copy / source, statement)
    bad = backward_edges(copy)
    assert len(bad) == 1 and bad[0].startswith(source), bad


def _copy_package(tmp_path: Path) -> Path:
    copy = tmp_path / "cortex"
    for p in package_modules().values():
        rel = p.relative_to(ROOT)
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(p.read_text())
    return copy


def _plant(planted: Path, statement: str) -> None:
    """`statement` appended to the file (inside a function when it is indented)."""
    text = planted.read_text() if planted.exists() else ""
    body = f"def _planted():\n{statement}\n" if statement.startswith("    ") else statement + "\n"
    planted.write_text(text + "\n" + body)


PASS_SUPPORT = {
    "outlining": "the function-outlining toolkit the frame split and the stage split share",
    "reporting": "the protocol through which a pass hands its reports to the driver, and the call that collects them",
    "state_analysis": "classify_states: the analysis the frame split, the schedule and the program read",
    "translation_validation": "a PassPipeline callback that reruns the reference interpreter after each pass",
}
"""Modules of passes/ that define no ModulePass, each with why it belongs beside the passes."""


def defines_module_pass(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    return any(
        isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id.endswith("Pass") or isinstance(b, ast.Attribute) and b.attr == "ModulePass"
                for b in node.bases)
        for node in ast.walk(tree)
    )


def test_passes_holds_passes():
    """passes/ is the level of ModulePasses: the matcher, the graph view and the quantisation report live elsewhere."""
    strays = sorted(
        p.stem for p in (ROOT / "passes").glob("*.py")
        if p.stem != "__init__" and p.stem not in PASS_SUPPORT and not defines_module_pass(p)
    )
    assert not strays, f"passes/ modules that define no pass: {strays} (move them to their level, README's table)"
    assert all((ROOT / "passes" / f"{name}.py").exists() for name in PASS_SUPPORT)
