"""Scenario scripts: one step per line, readable, replayable, shrinkable.

In the spirit of etcd-io/raft's interaction tests, a script is a header that says
what to build and a list of steps that say what happens::

    # leader crash and failover
    scenario dledger
    profile dledger-0.4
    nodes n1 n2 n3
    seed 42
    start-spread 500
    run 5000
    crash n1
    await-leader
    expect no-violation

Header keys: ``scenario``, ``profile``, ``nodes``, ``seed``, ``adapter`` (the adapter
that found it; ``--adapter`` overrides it), ``start-spread`` (boot times drawn in
``[0, MS]``), ``boot NODE MS`` (a fixed boot time), ``net`` (initial network),
``manual`` (messages wait until delivered explicitly). Every other line is a step; the
scenario's cluster class lists which steps it understands (``STEPS``). ``#`` starts a
comment. Steps are executed in order against a cluster built from the header; the
same script and adapter always produce the same trace.
"""
from __future__ import annotations

import re
import shlex
from typing import Iterable

import attrs

from conformance.errors import UserError, quoted
from conformance.inputs import MAX_INT, read_text, whole_number

# the longest a single step may let simulated time pass (``run MS``, ``await-* MS``,
# boot times): an hour is far beyond any protocol timeout, and a reference group
# simulates it in seconds (a typo such as ``run 99999999999999999999`` would never end)
MAX_STEP_MS = 3_600_000
# the longest line a script may have, in characters: the longest any rmqha writes is a few
# hundred (an adapter line with a classpath a few thousand), and the shell-style splitting
# of one huge token takes time quadratic in its length (a 5 MB token: minutes)
MAX_LINE_CHARS = 65_536
STEP_TOO = ("net",)  # a header line before the first step, a step after it
HEADER_KEYS = ("scenario", "profile", "nodes", "seed", "adapter", "start-spread", "boot", "net", "manual", "option")


@attrs.frozen(slots=True)
class Step:
    op: str
    args: tuple[str, ...] = ()
    line: int = 0  # source line, for error messages

    def render(self) -> str:
        return " ".join((self.op,) + tuple(_quote(a) for a in self.args))


def _quote(arg: str) -> str:
    return shlex.quote(arg) if (not arg or any(c.isspace() or c in "'\"#\\" for c in arg)) else arg


@attrs.frozen(slots=True)
class Script:
    scenario: str
    nodes: tuple[str, ...]
    seed: int = 0
    profile: str | None = None
    adapter: str | None = None
    start_spread_ms: int = 0
    boot_at: tuple[tuple[str, int], ...] = ()
    net: tuple[str, ...] = ()
    manual: bool = False
    options: tuple[tuple[str, str], ...] = ()
    steps: tuple[Step, ...] = ()
    title: str = ""

    def with_steps(self, steps: Iterable[Step]) -> "Script":
        return attrs.evolve(self, steps=tuple(steps))

    def option(self, name: str, default: str | None = None) -> str | None:
        for k, v in self.options:
            if k == name:
                return v
        return default

    def render(self) -> str:
        lines = []
        if self.title:
            lines += [f"# {t}" for t in self.title.splitlines()]
        # every value is quoted as the parser splits it (an adapter such as
        # ``stdio:java -cp build Shim`` is one value)
        lines.append(f"scenario {_quote(self.scenario)}")
        if self.profile:
            lines.append(f"profile {_quote(self.profile)}")
        if self.adapter:
            lines.append(f"adapter {_quote(self.adapter)}")
        lines.append("nodes " + " ".join(map(_quote, self.nodes)))
        lines.append(f"seed {self.seed}")
        if self.start_spread_ms:
            lines.append(f"start-spread {self.start_spread_ms}")
        for node, at in self.boot_at:
            lines.append(f"boot {_quote(node)} {at}")
        if self.net:
            lines.append("net " + " ".join(map(_quote, self.net)))
        if self.manual:
            lines.append("manual")
        for k, v in self.options:
            lines.append(f"option {_quote(k)} {_quote(v)}")
        lines += [s.render() for s in self.steps]
        return "\n".join(lines) + "\n"


def parse_script(text: str, source: str = "<script>") -> Script:
    """Parse a script; errors name the file and line and raise UserError."""
    header: dict[str, object] = {}
    options: list[tuple[str, str]] = []
    boots: list[tuple[str, int]] = []
    steps: list[Step] = []
    title: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_LINE_CHARS:  # before shlex, which would take minutes over it
            raise UserError(f"{source}:{number}: a line of {len(raw):,} characters (at most {MAX_LINE_CHARS:,})")
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if not header and not steps:
                title.append(stripped.lstrip("#").strip())
            continue
        try:
            words = shlex.split(stripped, comments=True)
        except ValueError as exc:
            raise UserError(f"{source}:{number}: cannot parse {quoted(stripped)}: {exc}") from None
        if not words:
            continue
        key, args = words[0], tuple(words[1:])
        if key in HEADER_KEYS and not steps:
            if key in header:  # one value each: a second line silently winning would hide a typo
                raise UserError(f"{source}:{number}: a second {quoted(key)} line (each header line is given once)")
            if key in ("option", "boot"):
                if len(args) != 2:
                    raise UserError(f"{source}:{number}: {quoted(key)} takes a name and a value")
                if key == "option":
                    options.append((args[0], args[1]))
                else:
                    boots.append((args[0], whole_number(args[1], f"{source}:{number}: boot time", 0, MAX_STEP_MS)))
            elif key == "manual":
                header["manual"] = True
            elif key in ("nodes", "net"):
                header[key] = args
            elif key == "adapter" and args:  # the rest of the line: 'broker=SPEC + controller=SPEC'
                header[key] = " ".join(args)
            else:
                if len(args) != 1:
                    raise UserError(f"{source}:{number}: {quoted(key)} takes exactly one value")
                header[key] = args[0]
            continue
        if key in HEADER_KEYS and key not in STEP_TOO:
            raise UserError(f"{source}:{number}: header line {quoted(key)} after the first step")
        steps.append(Step(key, args, number))
    if "scenario" not in header:
        raise UserError(f"{source}: missing 'scenario' line")
    if not header.get("nodes"):
        raise UserError(f"{source}: missing 'nodes' line")
    seed = whole_number(str(header.get("seed", 0)), f"{source}: seed", 0, MAX_INT)
    spread = whole_number(str(header.get("start-spread", 0)), f"{source}: start-spread", 0, MAX_STEP_MS)
    nodes = tuple(header["nodes"])
    twice = next((n for i, n in enumerate(nodes) if n in nodes[:i]), None)
    if twice is not None:
        raise UserError(f"{source}: node {quoted(twice)} is listed twice on the 'nodes' line")
    return Script(
        scenario=str(header["scenario"]),
        nodes=nodes,
        seed=seed,
        profile=header.get("profile"),
        adapter=header.get("adapter"),
        start_spread_ms=spread,
        boot_at=tuple(boots),
        net=tuple(header.get("net", ())),
        manual=bool(header.get("manual", False)),
        options=tuple(options),
        steps=tuple(steps),
        title="\n".join(title),
    )


_STEP_LINE = re.compile(r"line (\d+): ")


def in_file(source: str, message: str) -> str:
    """An error raised while a script ran (a step's ``line N: ...``: the cluster knows its
    steps' lines, not the file) named as parse errors name theirs: ``SOURCE:N: ...``."""
    found = _STEP_LINE.match(message)
    return f"{source}:{found.group(1)}: {message[found.end():]}" if found else f"{source}: {message}"


def read_script(path: str) -> Script:
    return parse_script(read_text(path, "scenario script"), path)
