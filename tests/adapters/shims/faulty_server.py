"""A protocol server that misbehaves on purpose, one way per mode.

Used by tests/adapters/test_transports.py both in process (``python:``, through the
factories at the bottom) and as a subprocess (``stdio:python faulty_server.py MODE``).
It answers ``hello`` correctly (unless the mode is about hello) and misbehaves on the
first ``call``.
"""
import json
import sys
import time

PROTOCOL = "rmqha-adapter/1"


def hello(req, **overrides):
    result = {"protocol": PROTOCOL, "implementation": "faulty", "version": "0",
              "operations": ["dledger.handle_heartbeat", "dledger.handle_vote"], "nodes": []}
    result.update(overrides)
    return {"rmqha": 1, "id": req["id"], "ok": True, "result": result}


class FaultyServer:
    def __init__(self, mode):
        self.mode = mode

    def handle(self, req):
        mode = self.mode
        if req["op"] == "hello":
            if mode == "bad-hello":
                return {"rmqha": 1, "id": req["id"], "ok": True, "result": {"protocol": PROTOCOL}}
            if mode == "old-protocol":
                return hello(req, protocol="rmqha-adapter/0")
            return hello(req)
        if req["op"] == "bye":
            return {"rmqha": 1, "id": req["id"], "ok": True, "result": {}}
        if mode == "hang":
            time.sleep(3600)
        if mode == "raise":
            raise RuntimeError("the implementation blew up")
        if mode == "exit":
            sys.stderr.write("fatal: cannot continue\n")
            sys.stderr.flush()
            sys.exit(3)
        if mode == "stderr-flood":  # more than a pipe holds: a driver that does not drain stderr hangs
            sys.stderr.write("x" * (1 << 20) + "\nlast words\n")
            sys.stderr.flush()
            return {"rmqha": 1, "id": req["id"], "ok": False, "error": {"code": "unsupported", "message": "no"}}
        if mode == "wrong-id":
            return {"rmqha": 1, "id": req["id"] + 7, "ok": True, "result": {}}
        if mode == "not-object":
            return [1, 2, 3]
        if mode == "bad-error-code":
            return {"rmqha": 1, "id": req["id"], "ok": False, "error": {"code": "oops", "message": "?"}}
        if mode == "internal":
            return {"rmqha": 1, "id": req["id"], "ok": False, "error": {"code": "internal", "message": "NPE"}}
        if mode == "unsupported":
            return {"rmqha": 1, "id": req["id"], "ok": False, "error": {"code": "unsupported", "message": "later"}}
        if mode == "wrong-result":
            return {"rmqha": 1, "id": req["id"], "ok": True, "result": {"@type": "HeartbeatDecision", "code": "OK"}}
        if mode == "not-json":
            return {"rmqha": 1, "id": req["id"], "ok": True, "result": object()}
        raise ValueError(f"unknown mode {mode!r}")


def main(mode):
    server = FaultyServer(mode)
    for line in sys.stdin:
        req = json.loads(line)
        if mode == "garbage" and req["op"] != "hello":
            print("this is not json", flush=True)
            continue
        if mode == "silent-exit" and req["op"] != "hello":
            return 0
        print(json.dumps(server.handle(req)), flush=True)
    return 0


# factories for python:tests.adapters.shims.faulty_server:FACTORY
def hang():
    return FaultyServer("hang")


def raising():
    return FaultyServer("raise")


def not_json():
    return FaultyServer("not-json")


def wrong_result():
    return FaultyServer("wrong-result")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
