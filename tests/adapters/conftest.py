"""Fixtures shared by the adapter tests."""
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory):
    """The Java shims (tests/fixtures/java: RmqhaShim, MisbehavingShim), compiled once.

    One directory for every test: a process has one JVM (JPype), which keeps the first
    class of a name, so a second build of RmqhaShim elsewhere would be refused by the
    ``jvm:`` adapter (``adapters.jvm.load_class``), whatever order the tests run in."""
    if shutil.which("javac") is None:
        pytest.skip("javac is not installed")
    out = tmp_path_factory.mktemp("java-shims")
    sources = [str(FIXTURES / "java" / name) for name in ("RmqhaShim.java", "MisbehavingShim.java")]
    subprocess.run(["javac", "-d", str(out), *sources], check=True, capture_output=True)
    return out
