"""Safety and liveness invariants, as pure predicates over observations.

Every invariant module reports a broken property as a ``Violation``.
"""
import attrs


@attrs.frozen(slots=True)
class Violation:
    property: str  # the invariant's name, e.g. "election-safety"
    message: str  # one line: what was seen, with node ids and numbers
    node: str | None = None
