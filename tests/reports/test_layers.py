"""reports/ reads results only: it may import conformance.results.* and conformance.errors,
never spec, reference, adapters or the rest of conformance (a report is built where only
the results are)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ("conformance.results", "conformance.errors", "reports")
PROJECT = ("spec", "reference", "adapters", "conformance", "reports")


def project_imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] in PROJECT:
                yield node.lineno, name


@pytest.mark.parametrize("path", sorted((ROOT / "reports").rglob("*.py")), ids=lambda p: p.name)
def test_reports_import_only_the_results_layer(path):
    bad = [(line, name) for line, name in project_imports(path)
           if not any(name == a or name.startswith(a + ".") for a in ALLOWED)]
    assert not bad, f"{path.name} imports {bad}"
