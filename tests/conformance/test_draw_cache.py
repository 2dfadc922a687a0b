"""conformance/draw_cache.py: the handler-level samples kept on disk are the samples drawn,
for every operation; a damaged cache is drawn again; the cache can be turned off."""
from __future__ import annotations

import json

import pytest

from adapters.operations import OPERATIONS
from conformance import draw_cache
from conformance.handler_check import _draw


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RMQHA_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_cached_draw_is_the_draw(cache_dir, operation):
    drawn = _draw(operation, 6)
    assert draw_cache.load(operation, 6) is None
    draw_cache.store(operation, 6, drawn)
    assert draw_cache.load(operation, 6) == drawn
    assert draw_cache.load(operation, 7) is None  # another count: another entry


def test_the_file_is_named_by_the_code_that_draws(cache_dir):
    path = draw_cache.cache_file()
    assert path.parent == cache_dir and path.name == f"draws-{draw_cache._key()}.json"
    assert "spec" in draw_cache.SOURCES and "conformance/strategies.py" in draw_cache.SOURCES


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"dledger.handle_vote:3": 7}',
                                    '{"dledger.handle_vote:3": [{"self_vote": "yes"}]}',
                                    '{"dledger.handle_vote:3": [{"no_such_argument": 1}]}'])
def test_a_damaged_cache_is_drawn_again(cache_dir, damage):
    draw_cache.cache_file().write_text(damage)
    assert draw_cache.load("dledger.handle_vote", 3) is None
    drawn = _draw("dledger.handle_vote", 3)
    draw_cache.store("dledger.handle_vote", 3, drawn)  # and written anew
    assert draw_cache.load("dledger.handle_vote", 3) == drawn


def test_a_draw_the_protocol_does_not_carry_exactly_is_not_kept(cache_dir):
    draw_cache.store("dledger.handle_vote", 1, ({"self_vote": 1},))  # an int where a bool goes
    assert draw_cache.load("dledger.handle_vote", 1) is None
    assert not draw_cache.cache_file().exists()


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("RMQHA_CACHE_DIR", "off")
    assert draw_cache.cache_file() is None
    draw_cache.store("dledger.handle_vote", 2, _draw("dledger.handle_vote", 2))
    assert draw_cache.load("dledger.handle_vote", 2) is None


def test_entries_of_other_operations_are_kept(cache_dir):
    vote, heartbeat = _draw("dledger.handle_vote", 2), _draw("dledger.handle_heartbeat", 2)
    draw_cache.store("dledger.handle_vote", 2, vote)
    draw_cache.store("dledger.handle_heartbeat", 2, heartbeat)
    assert draw_cache.load("dledger.handle_vote", 2) == vote
    assert sorted(json.loads(draw_cache.cache_file().read_text())) == ["dledger.handle_heartbeat:2",
                                                                     "dledger.handle_vote:2"]
