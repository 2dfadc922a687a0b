"""Ordered tables of named rules, evaluated first-match-wins.

A rule is a name and a function of the call's context that returns a result when it
decides the call, None to pass to the next row. The decided result is stamped with
the row's name (unless the rule named a finer branch itself), so tests and traces
name the branch taken exactly as the table does.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, Optional, Sequence, TypeVar

import attrs

C = TypeVar("C")


@attrs.frozen(slots=True)
class Rule(Generic[C]):
    name: str
    decide: Callable[[C], Optional[Any]]


def first_match(rules: Sequence[Rule], ctx: Any) -> tuple[str, Any]:
    """Run ``rules`` in order; return (row name, decision) of the first row that decides."""
    for rule in rules:
        decision = rule.decide(ctx)
        if decision is not None:
            return rule.name, decision
    raise ValueError(f"no rule decided: {[r.name for r in rules]}")


def rule_names(rules: Sequence[Rule]) -> tuple[str, ...]:
    return tuple(r.name for r in rules)
