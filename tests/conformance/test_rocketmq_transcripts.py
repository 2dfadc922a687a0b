"""Fidelity to the real RocketMQ classes on every CI run, without a jar.

``tests/transcripts/rocketmq/<build>.jsonl.gz`` were recorded from the real
``ReplicasInfoManager`` (with ``DefaultElectPolicy``), ``DefaultBrokerHeartbeatManager``
and ``EpochFileCache`` of apache/rocketmq develop (8fc57f1) and 5.1.4, compiled from the
sources with ``rmqha build-classpath`` and driven through ``jvm:rocketmq`` (``rmqha transcript
record --adapter jvm:rocketmq --samples 1000 --keep 60``; docs/adapters.md). Every recorded
answer must be the spec's or reproduce a known upstream departure, named
(``conformance/departures.py``); the behaviours the spec was corrected to follow must be in
the recording, and undoing any of those corrections must make the replay fail.
"""
from pathlib import Path

import pytest

from adapters.operations import OPERATIONS as OPS
from conformance.transcript import load, path_of, replay
from spec.controller import elect_policy, heartbeat
from spec.controller import api as controller_api
from spec.controller.records import CleanBrokerDataRequest, ResponseCode

TRANSCRIPTS = sorted((Path(__file__).parents[1] / "transcripts" / "rocketmq").glob("*.jsonl.gz"))
OPERATIONS = {
    "controller.handle", "controller.apply_event", "controller.on_broker_heartbeat", "controller.is_broker_active",
    "controller.scan_not_active_broker", "truncation.find_consistent_point", "truncation.append",
    "truncation.truncate_suffix_by_offset", "truncation.truncate_suffix_by_epoch", "truncation.truncate_prefix_by_offset",
    "truncation.set_last_end", "truncation.find_entry_by_offset", "truncation.find_entry_by_epoch",
    "truncation.next_entry"}
# what each build shows where it departs knowingly (docs/adapters.md, "What the real classes show")
DEPARTURES = {
    "controller.handle": {"elect-offset-comparator-overflow", "elect-candidate-without-live-info-throws"},
    "controller.apply_event": {"update-address-of-unknown-set-throws"},
    "truncation.find_consistent_point": {"upstream-empty-epoch"},
    "truncation.truncate_suffix_by_offset": {"finite-end-after-suffix-truncation"},
    "truncation.truncate_suffix_by_epoch": {"finite-end-after-suffix-truncation"},
    "truncation.truncate_prefix_by_offset": {"finite-end-after-suffix-truncation"},
}


def test_develop_and_5_1_are_recorded():
    versions = {load(p)[0]["version"] for p in TRANSCRIPTS}
    assert versions == {"5.3.4-SNAPSHOT develop@8fc57f1", "5.1.4 rocketmq-all-5.1.4@1a681bd"}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_every_recorded_answer_is_the_specs_or_a_named_departure(path):
    r = replay(path)
    assert set(r.calls) == OPERATIONS and all(n >= 20 for n in r.calls.values())
    assert r.agreed, "\n".join(m.render() for m in r.mismatches[:3])
    assert {op: {label.split(" (")[0] for label in seen} for op, seen in r.departures.items()} == DEPARTURES
    # the recording itself judged every sampled call: each agreed or was one of these departures
    for op, a in r.header["agreement"].items():
        assert a["agreed"] + sum(a.get("departures", {}).values()) == a["asked"] >= 700, op


def _entries(path, op):
    return [e for e in load(path)[1] if e.op == op]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_the_corrected_behaviours_are_in_the_recording(path):
    handle = _entries(path, "controller.handle")
    assert any(isinstance(e.args["request"], CleanBrokerDataRequest) and e.args["request"].clean_living_broker
               and e.args["request"].broker_ids_to_clean and e.answer.response.code is ResponseCode.SUCCESS
               for e in handle), "a forced clean with an id list"
    beats = _entries(path, "controller.on_broker_heartbeat")
    assert any(e.args["heartbeat"].identity not in e.args["table"].entries and e.args["heartbeat"].confirm_offset != 0
               for e in beats), "a first heartbeat carrying a confirmOffset"
    paths = [path_of("controller.handle", e.args, OPS["controller.handle"].spec("rocketmq-5.1", **e.args))
             for e in handle]
    assert any(p.endswith("tie not the smallest id") for p in paths), "equals among ids from 16 on, in HashSet order"
    assert any(p.endswith("(HashSet order)") for p in paths), "alter members checked in HashSet order"


@pytest.mark.parametrize("undo", ["clean_living_broker_ids", "first_heartbeat_confirm_offset", "hash_set_order"])
def test_undoing_a_correction_fails_the_replay(monkeypatch, undo):
    """The recordings guard the corrections: with the spec as it was before, replay finds mismatches."""
    if undo == "clean_living_broker_ids":
        monkeypatch.setattr(controller_api, "_ids_to_clean", lambda request: request.broker_ids_to_clean or None)
    elif undo == "first_heartbeat_confirm_offset":
        original = heartbeat.on_broker_heartbeat

        def keeps_the_first_confirm_offset(table, beat, now):
            after = original(table, beat, now)
            if beat.identity in table.entries:
                return after
            info = after.entries[beat.identity]
            return heartbeat.HeartbeatTable(after.entries.set(beat.identity, type(info)(**{
                **{f: getattr(info, f) for f in info.__slots__ if not f.startswith("__")},
                "confirm_offset": beat.confirm_offset})))

        monkeypatch.setattr(heartbeat, "on_broker_heartbeat", keeps_the_first_confirm_offset)
    else:
        monkeypatch.setattr(elect_policy, "java_hash_set_order", sorted)
    assert any(replay(p).mismatches for p in TRANSCRIPTS)
