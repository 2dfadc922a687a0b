"""`rmqha prove cases` over the shipped case files, disagreements and malformed files."""
import json
from pathlib import Path

import pytest

from cli.main import main

CASES = sorted((Path(__file__).parent.parent / "cases" / "truncation").glob("*.json"))


def test_shipped_cases_all_agree(capsys):
    assert main(["prove", "cases", *map(str, CASES)]) == 0
    out = capsys.readouterr().out
    assert "rip44-1" in out and "rip44-6" in out and "DISAGREES" not in out


def write(tmp_path, doc, name="c.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(p)


GOOD = {"name": "x", "slave": {"epochs": [[1, 0]], "max_offset": 1000},
        "master": {"epochs": [[1, 0], [2, 900]], "max_offset": 1200}, "expect": {"consistent_point": 900}}


def test_disagreeing_case_exits_1(capsys, tmp_path):
    bad = dict(GOOD, expect={"consistent_point": 950})
    assert main(["prove", "cases", write(tmp_path, {"cases": [bad]})]) == 1
    assert "DISAGREES" in capsys.readouterr().out


MALFORMED = [
    ("not_json", "{oops", "not JSON"),
    ("no_cases", {"description": "x"}, "'cases' is a required property"),
    ("missing_field", {"cases": [{k: v for k, v in GOOD.items() if k != "master"}]}, "case 'x' (#1)"),
    ("bad_type", {"cases": [dict(GOOD, slave={"epochs": [[1, "0"]], "max_offset": 1000})]},
     "field slave.epochs[0][1]"),
    ("not_increasing", {"cases": [dict(GOOD, master={"epochs": [[2, 0], [1, 900]], "max_offset": 1200})]},
     "field master.epochs[1]: epochs and start offsets must both strictly increase"),
    ("bad_log", {"cases": [dict(GOOD, slave={"epochs": [[1, 0]], "max_offset": 1000, "log": [[0, 500, 1]]})]},
     "field slave.log: segments end at 500"),
    ("unknown_algorithm", {"cases": [dict(GOOD, algorithm="nope")]}, "field algorithm: unknown 'nope'"),
    ("duplicate_name", {"cases": [GOOD, GOOD]}, "used by more than one case"),
]


@pytest.mark.parametrize("name,doc,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_is_one_line_exit_2(capsys, tmp_path, name, doc, message):
    path = write(tmp_path, doc)
    assert main(["prove", "cases", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and path in err and message in err


def test_missing_file(capsys, tmp_path):
    assert main(["prove", "cases", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_prove_truncation_one_variant(capsys):
    assert main(["prove", "truncation", "--max-epochs", "3", "--variant", "max-of-end-offsets", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "refuted" in out and "epoch file" in out
    # the last line names what was checked: the algorithm itself was not
    assert out.splitlines()[-1] == "result: the bad variant is refuted (the algorithm not checked)"


def test_the_result_line_names_only_what_was_checked():
    from cli.commands.prove import _result

    assert _result(True, True, True) == "the algorithm is proved and every bad variant refuted"
    assert _result(True, True, False) == "the algorithm is proved (no bad variant checked)"
    assert _result(False, True, False) == "the algorithm is NOT proved"
    assert _result(False, False, True) == "the bad variant is NOT refuted"
