"""docs/adapter-protocol.md stays true: its transcript is what the reference answers,
and every line of it fits the published schema (adapters/protocol.schema.json)."""
import io
import json
from pathlib import Path

import jsonschema
import pytest

from adapters.protocol import schema, validate
from adapters.reference_server import ReferenceServer
from adapters.stdio_server import serve

DOC = Path(__file__).parents[2] / "docs" / "adapter-protocol.md"


def transcript() -> list[tuple[str, str]]:
    text = DOC.read_text()
    block = text[text.index("```\n> {") + 4:]
    block = block[: block.index("```")]
    return [(line[0], line[2:]) for line in block.splitlines() if line[:2] in ("> ", "< ")]


def test_the_transcript_is_what_the_reference_answers():
    lines = transcript()
    requests = [text for side, text in lines if side == ">"]
    documented = [json.loads(text) for side, text in lines if side == "<"]
    out = io.StringIO()
    serve(ReferenceServer(), io.StringIO("\n".join(requests) + "\n"), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    for answer in answers:  # the documented version is an installed rmqha's
        if isinstance(answer.get("result"), dict) and "implementation" in answer["result"]:
            answer["result"]["version"] = documented[0]["result"]["version"]
    assert answers == documented


@pytest.mark.parametrize("side,definition", [(">", "request"), ("<", "response")])
def test_every_transcript_line_fits_the_schema(side, definition):
    lines = [json.loads(text) for s, text in transcript() if s == side]
    assert lines and all(validate(definition, line) is None for line in lines)
    if side == "<":
        assert validate("hello", lines[0]["result"]) is None


def test_the_schema_is_a_valid_schema_and_rejects_what_it_should():
    jsonschema.Draft202012Validator.check_schema(schema())
    assert validate("response", {"rmqha": 1, "id": 1, "ok": False, "error": {"code": "oops", "message": ""}})
    assert validate("request", {"rmqha": 1, "id": 1, "op": "node.explode", "args": {}})
    assert validate("ready", {"messages": [{"payload": {}}]})  # no dst
