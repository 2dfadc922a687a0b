"""The layer rules of docs/ARCHITECTURE.md, enforced over what each module really loads.

Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, and whatever
those import, so each rule is checked on the transitive closure of a module's imports
(every ``import`` statement, at any depth of the module, plus the parent packages of
every module imported). A violation names the chain of imports that leads upward.

Two more rules keep the layers honest: no import cycle among modules, and no import
inside a function (the way to dodge a cycle) except where ARCHITECTURE.md allows it.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

import adapters.errors
import conformance.errors

ROOT = Path(__file__).resolve().parents[1]

# layer -> the other layers it may load (ARCHITECTURE.md, "Layers")
MAY_LOAD: dict[str, frozenset[str]] = {
    "spec": frozenset(),
    "reference": frozenset({"spec"}),
    "adapters": frozenset({"spec", "reference"}),
    "results": frozenset(),
    "conformance": frozenset({"spec", "reference", "adapters", "results"}),
    "reports": frozenset({"results"}),
    "cli": frozenset({"spec", "reference", "adapters", "results", "conformance", "reports"}),
}
LAYERS = tuple(MAY_LOAD)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {
    _module_name(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))
}


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@lru_cache(maxsize=None)
def imports_of(module: str) -> tuple[str, ...]:
    """Project modules that loading ``module`` loads directly (parents included)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(), str(MODULES[module]))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            found += [m for m in _with_parents(name) if m in MODULES and m != module]
    own_parents = [m for m in _with_parents(module)[:-1] if m in MODULES]
    return tuple(dict.fromkeys(own_parents + found))


def chains_from(module: str) -> dict[str, tuple[str, ...]]:
    """Every project module ``module`` loads, transitively, with one chain leading to it."""
    chains = {module: (module,)}
    todo = [module]
    while todo:
        current = todo.pop()
        for nxt in imports_of(current):
            if nxt not in chains:
                chains[nxt] = chains[current] + (nxt,)
                todo.append(nxt)
    return chains


def layer_of(module: str) -> str:
    return module.split(".")[0]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_loads_only_its_own_and_lower_layers(module):
    allowed = MAY_LOAD[layer_of(module)] | {layer_of(module)}
    bad = [" -> ".join(chain) for target, chain in sorted(chains_from(module).items())
           if layer_of(target) not in allowed]
    assert not bad, f"{module} reaches a layer it may not load: {bad[:3]}"


# Where an import inside a function is allowed (ARCHITECTURE.md, "Imports"): a CLI command
# loads its implementation when it runs (``rmqha --help`` and quick commands stay quick),
# and PySyncObj's runtime is loaded only for a pysyncobj adapter.
LAZY_IMPORTERS = ("cli.commands.",)
LAZY_MODULES = ("adapters.pysyncobj_server",)


def _function_level_imports(module: str):
    tree = ast.parse(MODULES[module].read_text())
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    yield node.lineno, [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    yield node.lineno, [node.module]


def test_no_import_inside_a_function_dodges_a_cycle():
    bad = [f"{m}:{line} imports {name}" for m in sorted(MODULES) if not m.startswith(LAZY_IMPORTERS)
           for line, names in _function_level_imports(m) for name in names
           if layer_of(name) in MAY_LOAD and name not in LAZY_MODULES]
    assert not bad, bad


def _module_level_imports(module: str) -> set[str]:
    """What loading ``module`` runs first, outside functions and ``if TYPE_CHECKING``
    blocks. Its own packages are running already; ``from pkg import name`` of a name
    that is not a submodule needs ``pkg`` itself."""
    out: list = []

    def visit(body):
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append(node)
            elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for part in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                    visit(part)

    visit(ast.parse(MODULES[module].read_text()).body)
    own = set(_with_parents(module)[:-1])
    deps: set[str] = set()
    for node in out:
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif node.level == 0 and node.module:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            targets = [x for x in subs if x in MODULES] + ([node.module] if any(x not in MODULES for x in subs) else [])
        else:
            continue
        for target in targets:
            deps |= {m for m in _with_parents(target) if m in MODULES and m != module and (m == target or m not in own)}
    return deps


def test_no_import_cycle():
    graph = {m: _module_level_imports(m) for m in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def cycle_from(m, path):
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = cycle_from(n, path + [n])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = cycle_from(m, [m])
            assert not found, " -> ".join(found)


def test_the_cycle_check_sees_a_cycle(monkeypatch, tmp_path):
    for name, text in (("spec.fake_a", "from spec.fake_b import x\n"), ("spec.fake_b", "import spec.fake_a\n")):
        (tmp_path / f"{name}.py").write_text(text)
        monkeypatch.setitem(MODULES, name, tmp_path / f"{name}.py")
    with pytest.raises(AssertionError, match="fake_a -> spec.fake_b -> spec.fake_a"):
        test_no_import_cycle()


def _outside_imports(module: str) -> set[str]:
    """Top-level names of what ``module`` imports from outside the project, at any depth."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(LAYERS)


# ARCHITECTURE.md, the spec/ row: pure (no clock, randomness or I/O): attrs and the standard
# library's pure modules; z3 and the solver's stopwatch only in spec/proofs.
PURE = frozenset({"__future__", "typing", "enum", "collections", "functools", "itertools", "math", "operator",
                  "struct", "abc", "bisect", "heapq", "re", "types", "numbers", "fractions", "attrs"})
PROOFS_ALSO = frozenset({"z3", "time"})
# "Sans-IO nodes and the simulator": a reference node reads no clock, socket or random
# source of its own; the simulator's randomness is random.Random streams from the seed.
REFERENCE_ALSO = frozenset({"json", "array", "random"})


def test_spec_loads_nothing_impure():
    bad = {m: sorted(_outside_imports(m) - PURE - (PROOFS_ALSO if m.startswith("spec.proofs") else frozenset()))
           for m in MODULES if layer_of(m) == "spec"}
    assert not {m: names for m, names in bad.items() if names}


def test_reference_reads_no_clock_socket_or_global_randomness():
    bad = {m: sorted(_outside_imports(m) - PURE - REFERENCE_ALSO) for m in MODULES if layer_of(m) == "reference"}
    assert not {m: names for m, names in bad.items() if names}
    global_random = [f"{m}: {hit}" for m in MODULES if layer_of(m) == "reference"
                     for hit in re.findall(r"\brandom\.(?!Random\b)\w+", MODULES[m].read_text())]
    assert not global_random, "draw from a seeded random.Random stream, never the global one"


def test_profiles_are_data_not_branches():
    """"Conventions": a profile selects and orders rows; no procedure asks which profile it is."""
    def asks(node) -> bool:
        return isinstance(node, ast.Compare) and any(
            re.search(r"(^|\.)profile(\.name)?$", ast.unparse(side)) for side in [node.left, *node.comparators])

    bad = [f"{m}:{node.lineno}" for m in MODULES if layer_of(m) in ("spec", "reference")
           for node in ast.walk(ast.parse(MODULES[m].read_text())) if asks(node)]
    assert not bad


def test_the_seven_layers_are_the_distribution_packages():
    """"The seven directories are top-level Python packages of the rmqha distribution."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    include = re.search(r"^\[tool\.setuptools\.packages\.find\]\s*include = \[([^]]*)\]", pyproject, re.M)
    assert include and set(re.findall(r'"(\w+)\*"', include.group(1))) == set(LAYERS)
    assert all((ROOT / layer / "__init__.py").exists() for layer in LAYERS)


def test_architecture_md_names_every_dependency():
    """Its "Dependencies" section names each package pyproject.toml depends on."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps = re.findall(r'^\s*"([A-Za-z0-9_-]+)[<>=]', pyproject, re.M)
    section = (ROOT / "docs" / "ARCHITECTURE.md").read_text().split("## Dependencies", 1)[1]
    assert deps and not [d for d in deps if not re.search(rf"\b{re.escape(d)}\b", section)]


def test_user_errors_are_defined_once():
    """"Errors for users": defined in adapters/errors.py and re-exported by conformance/errors.py."""
    for name in ("UserError", "AdapterError", "NotApplicable"):
        assert getattr(conformance.errors, name) is getattr(adapters.errors, name)


# "Imports": what costs a JVM, a Spark session, a solver or a plotting stack is loaded
# only where it is needed: the CLI's parser loads none of it, and no module loads
# PySpark or JPype when it is imported (the functions that start them import them).
_LOADS = """
import importlib, json, sys
from cli.main import build_parser
build_parser()
heavy = ("pyspark", "jpype", "z3", "matplotlib", "pysyncobj")
parser = [m for m in heavy if m in sys.modules]
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({"parser": parser, "all": [m for m in heavy if m in sys.modules]}))
"""


def test_heavy_runtimes_load_only_where_needed():
    names = [m for m in MODULES if not m.endswith("__main__")]
    out = subprocess.run([sys.executable, "-c", _LOADS, *names], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert loaded["parser"] == []
    assert not {"pyspark", "jpype"} & set(loaded["all"])


def test_the_checker_sees_a_violation_through_a_package_init(tmp_path, monkeypatch):
    """A rule checked on direct imports only would miss reports -> results -> adapters
    via an ``__init__``; the closure must not."""
    monkeypatch.setitem(MODULES, "results.fake", tmp_path / "fake.py")
    monkeypatch.setitem(MODULES, "results.fakepkg", tmp_path / "fakepkg.py")
    (tmp_path / "fake.py").write_text("from results.fakepkg import thing\n")
    (tmp_path / "fakepkg.py").write_text("def f():\n    import adapters.errors\n")
    imports_of.cache_clear()
    try:
        chains = chains_from("results.fake")
    finally:
        imports_of.cache_clear()
    assert chains["adapters.errors"][:2] == ("results.fake", "results.fakepkg")


def test_architecture_md_states_these_rules():
    """ARCHITECTURE.md's layer table states the same rules as this test."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    for layer, allowed in MAY_LOAD.items():
        row = re.search(rf"^\| `{layer}/` \| [^|]* \| ([^|]*) \|", text, re.M)
        assert row, f"ARCHITECTURE.md has no layer row for {layer}/"
        stated = set(re.findall(r"`(\w+)`", row.group(1))) & set(MAY_LOAD)
        assert stated == set(allowed), f"{layer}/: ARCHITECTURE.md says {sorted(stated)}, the test {sorted(allowed)}"


def test_every_path_architecture_md_names_exists():
    """"Where things live" stays true: each file or folder the page names is there."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"`((?:%s)/[\w./-]*)`" % "|".join(LAYERS + ("docs", "tests", "benchmarks")), text))
    assert named and not [p for p in sorted(named) if not (ROOT / p).exists()]


def test_every_function_architecture_md_names_lives_where_it_says():
    """"Find a rule by its name": a snake_case name in a row is defined in that row's files."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    table = text.split("## Find a rule by its name", 1)[1].split("\n## ", 1)[0]
    wrong = []
    for row in re.findall(r"^\| (.*) \| (.*) \|$", table, re.M):
        files = [f for p in re.findall(r"`([\w./-]+)`", row[1]) for f in
                 ((ROOT / p).rglob("*.py") if (ROOT / p).is_dir() else [ROOT / p]) if f.suffix == ".py" and f.exists()]
        source = "".join(f.read_text() for f in files)
        for name in re.findall(r"`([a-z][a-z0-9]*_[a-z0-9_]+)`", row[0]):
            if not re.search(rf"^\s*(def|class) {name}\b|^{name}\s*[:=]", source, re.M):
                wrong.append(f"{name} not in {row[1]}")
    assert not wrong, wrong


def test_java_fixtures_are_ascii():
    """javac reads sources in the platform encoding: under LANG=C a non-ASCII character
    (even in a comment) fails README's build step."""
    fixtures = Path(__file__).parent / "fixtures" / "java"
    bad = [str(p) for p in fixtures.rglob("*.java") if not p.read_bytes().isascii()]
    assert not bad, bad
