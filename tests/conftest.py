import pytest


@pytest.fixture(scope="session")
def adapter(request) -> str:
    """The implementation under test (``pytest --adapter=SPEC``; default reference)."""
    return request.config.getoption("--adapter")
