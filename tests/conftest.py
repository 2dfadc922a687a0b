import pytest

from adapters import placement
from conformance.targets import drives_another_process


@pytest.fixture(scope="session")
def adapter(request) -> str:
    """The implementation under test (``pytest --adapter=SPEC``; default reference).

    For an implementation in another process or thread the session runs beside it on one
    CPU, as ``rmqha check`` does (``adapters.placement``; ``RMQHA_COLOCATE=0``: off)."""
    spec = request.config.getoption("--adapter")
    with placement.colocated(drives_another_process(spec)):
        yield spec
