"""pytest configuration shared by every test.

* Hypothesis runs derandomized with bounded examples by default (profile ``ci``),
  so CI is deterministic; ``RMQHA_HYPOTHESIS_PROFILE=explore`` turns on long,
  random exploration for local hunting.
* ``--adapter=SPEC`` selects the implementation the conformance tests drive
  (``reference`` by default; see docs/adapters.md for every form of SPEC).
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("RMQHA_HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser):
    parser.addoption(
        "--adapter",
        action="store",
        default="reference",
        help="implementation under test for the conformance tests "
        "(reference, mutant:NAME, python:MODULE:FACTORY, stdio:COMMAND, jvm:...)",
    )
