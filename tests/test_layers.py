"""The layer rules of docs/ARCHITECTURE.md, enforced over what each module really loads.

Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, and whatever
those import, so each rule is checked on the transitive closure of a module's imports
(every ``import`` statement, at any depth of the module, plus the parent packages of
every module imported). A violation names the chain of imports that leads upward.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

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


def test_z3_only_in_spec_proofs_within_spec():
    """The spec's z3 models live in spec/proofs; the rest of spec/ is plain Python."""
    bad = [m for m in MODULES if layer_of(m) == "spec" and not m.startswith("spec.proofs")
           and re.search(r"^\s*(import z3|from z3\b)", MODULES[m].read_text(), re.M)]
    assert not bad


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
