"""``jvm:dledger[=PROFILE][:CLASSPATH]``: the real openmessaging DLedger elector, on a virtual clock.

CLASSPATH (default ``$RMQHA_DLEDGER_JAR``) holds one DLedger build and its dependencies:
the jar ``io.openmessaging.storage:dledger`` from Maven Central (0.4.0 for RocketMQ 5.x,
0.2.x/0.3.x for RocketMQ 4.9.x) plus ``org.slf4j:slf4j-api``, or classes compiled from a
source tree (docs/adapters.md). PROFILE is the profile the build is judged against; left
out, it is the profile of the build's own version (``profile_for_version``), read from
the Maven ``pom.properties`` the jar carries or, failing that, its manifest.

The build is loaded through ``rmqha.jvm.VirtualTime$Loader`` (``adapters/java/
VirtualTime.java``, compiled on first use): the same classes, with every read of the
clock, wait on a latch, sleep, random draw and RPC call redirected to a virtual clock,
so a round runs in no real time and the times it takes are exact. Each build has a
class loader of its own: one process can hold any number of releases.

Every call builds a real ``DLedgerConfig``, ``MemberState`` and ``DLedgerLeaderElector``
in the state the call describes and asks the elector:

| operation | real method |
|---|---|
| ``dledger.handle_vote`` / ``handle_heartbeat`` | ``DLedgerServer.handleVote`` / ``handleHeartBeat`` (their group and remoteId checks, then the elector's); a candidate's own vote: ``DLedgerLeaderElector.handleVote(request, true)`` |
| ``dledger.heartbeat_round`` | ``maintainAsLeader`` (with ``sendHeartbeats``), replies scripted with their times |
| ``dledger.candidate_round`` | ``maintainAsCandidate``, replies and random values scripted |

How a call is observed (the elector's effects are not return values in Java):

| spec effect | observed as |
|---|---|
| ``SetVotedFor(c)`` | ``MemberState`` wrote its term/vote file during the call, with currVoteFor ``c`` |
| ``BecomeCandidate(t)`` / ``BecomeFollower(t, l)`` / ``BecomeLeader(t)`` | the elector's ``RoleChangeHandler`` callback ``handle(t, role)`` (registered by rmqha) |
| ``IncreaseTermImmediately`` | ``needIncreaseTermImmediately`` went from false to true |
| ``RefreshLeaderHeartbeat`` | ``lastLeaderHeartBeatTime`` moved, without a role change |
| a round's times | the virtual clock when the method returns; the elector's timestamp fields |
| a round's random values | the bound each redirected ``Random.nextInt`` asked for, and where |
"""
from __future__ import annotations

import configparser
import os
import re
import shutil
import tempfile
import weakref
import zipfile
from pathlib import Path

from adapters.errors import UserError
from adapters.jvm import RealClassesServer, expand_classpath, harness_classpath, split_classpath
from spec.dledger import effects as fx
from spec.dledger.heartbeat import HeartbeatDecision
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import PROFILES
from spec.dledger.records import HeartBeatResponse, ParseResult, ResponseCode, Role, VoteResult
from spec.dledger.rounds import CandidateRoundResult, CandidateState, DrawUse, HeartbeatRoundResult, LeaderTimes
from spec.dledger.vote import VoteDecision

DLEDGER_ENV = "RMQHA_DLEDGER_JAR"
PACKAGE = "io.openmessaging.storage.dledger"
_ELECTOR_CLASS = PACKAGE.replace(".", "/") + "/DLedgerLeaderElector.class"
_POM = "META-INF/maven/io.openmessaging.storage/dledger/pom.properties"
# release-0.1 spells one result with two underscores; the outcome is the same
RESULT_ALIASES = {"REJECT_ALREADY__HAS_LEADER": "REJECT_ALREADY_HAS_LEADER"}
# "now" of a call on the virtual clock: far from 0, so that DLedger's -1 ("never") is
# always longer ago than any interval, as it is against the wall clock
CALL_TIME = 1_000_000_000


# ------------------------------------------------------------------ which build, which profile


def _read(entry: str, name: str) -> str | None:
    """The text of ``name`` inside a classpath entry (a directory or a jar), if there."""
    try:
        if os.path.isdir(entry):
            path = os.path.join(entry, name)
            return Path(path).read_text(encoding="utf-8", errors="replace") if os.path.isfile(path) else None
        with zipfile.ZipFile(entry) as jar:
            return jar.read(name).decode("utf-8", "replace") if name in jar.namelist() else None
    except (OSError, zipfile.BadZipFile, KeyError):
        return None


def build_version(classpath: list[str]) -> str | None:
    """The version of the DLedger build on ``classpath``: its pom.properties, else its manifest."""
    for entry in expand_classpath(classpath):
        if _read(entry, _ELECTOR_CLASS) is None:
            continue
        pom = _read(entry, _POM)
        if pom is not None:
            props = configparser.ConfigParser()
            props.read_string("[pom]\n" + pom)
            if props.has_option("pom", "version"):
                return props.get("pom", "version").strip()
        manifest = _read(entry, "META-INF/MANIFEST.MF") or ""
        found = re.search(r"^(?:Implementation|Bundle)-Version:\s*(\S+)", manifest, re.M)
        return found.group(1) if found else None
    return None


def profile_for_version(version: str | None) -> str | None:
    """The profile a DLedger release claims by its version (None: between profiles, or unknown).

    0.2.0-0.2.2 (the first leadership-transfer rule) and 0.3.2 (H-B heartbeat rounds and
    0.4 timing with G1 logs) match no profile as a whole; ``rmqha fingerprint`` shows
    which procedures match which.
    """
    numbers = tuple(int(x) for x in re.findall(r"\d+", version or "")[:4])
    if not numbers:
        return None
    if numbers[:2] == (0, 1):
        return "dledger-0.1"
    if (0, 2, 3) <= numbers < (0, 3, 2):
        return "dledger-0.2"
    if numbers >= (0, 4):
        return "dledger-0.4"
    return None


# ------------------------------------------------------------------ the server


class DLedgerElectorServer(RealClassesServer):
    """The real DLedger elector, one fresh MemberState and elector per call."""

    implementation = "openmessaging-dledger"

    def __init__(self, classpath: list[str], profile: str | None = None):
        if profile is not None and profile not in PROFILES:
            raise UserError(f"unknown DLedger profile {profile!r} (known: {', '.join(PROFILES)})")
        super().__init__(harness_classpath(), {})
        self.classpath = classpath
        self._version = build_version(classpath)
        claimed = profile_for_version(self._version)
        self.declared = {"dledger": profile} if profile else {}
        self.claims = {"dledger": claimed} if claimed else {}
        judged = profile or claimed
        self.profiles = {"dledger": judged} if judged else {}
        self.j = self._load("DLedger", lambda: _DLedgerClasses(self.jpype, classpath))
        # MemberState keeps its term/vote file under a store directory: one per server
        # (made once the classes loaded), removed on bye, when the server is collected,
        # and at exit
        self.dir = Path(tempfile.mkdtemp(prefix="rmqha-dledger-"))
        self._remove_dir = weakref.finalize(self, shutil.rmtree, str(self.dir), True)

    def version(self) -> str:
        return self._version or "unknown (no pom.properties or manifest)"

    def hello(self) -> dict:
        return {**super().hello(), "declared": self.declared, "claims": self.claims}

    def close(self) -> None:
        self._remove_dir()

    def _call(self, member, taking: tuple[bool, int] | None = None) -> "_Call":
        return _Call(self.j, self.dir, member, taking)

    # ------------------------------------------------------------------ handlers

    def handle_vote(self, args: dict):
        request = args["request"]
        with self._call(args["member"]) as call:
            jreq = call.request(self.j.VoteRequest, request)
            jreq.setLedgerEndTerm(request.ledger_end_term)
            jreq.setLedgerEndIndex(request.ledger_end_index)
            if args["self_vote"]:  # the candidate asks its own elector, not its server
                response = call.elector.handleVote(jreq, True).get()
            else:
                response = call.server().handleVote(jreq).get()
            return VoteDecision(self.j.vote_result(response), int(response.getTerm()), call.effects(),
                                code=ResponseCode(int(response.getCode())))

    def handle_heartbeat(self, args: dict):
        request = args["request"]
        with self._call(args["member"]) as call:
            response = call.server().handleHeartBeat(call.request(self.j.HeartBeatRequest, request)).get()
            return HeartbeatDecision(ResponseCode(int(response.getCode())), int(response.getTerm()), call.effects())

    # ------------------------------------------------------------------ rounds

    def heartbeat_round(self, args: dict):
        member, now, times = args["member"], args["now"], args["times"]
        with self._call(member) as call:
            call.set_elector(lastSendHeartBeatTime=times.last_send_heartbeat_time,
                             lastSuccHeartBeatTime=times.last_succ_heartbeat_time)
            self.j.VirtualTime.reset(now)
            for r in args["replies"]:
                self.j.VirtualTime.reply(r.peer, r.at, None if r.response is None else
                                         self.j.heartbeat_response(r.response))
            call.run("maintainAsLeader")
            after = LeaderTimes(int(call.get_elector("lastSendHeartBeatTime")),
                                int(call.get_elector("lastSuccHeartBeatTime")))
            returns_at = int(self.j.VirtualTime.now())
            sent = after != times or returns_at != now or len(self.j.VirtualTime.sent()) > 0
            return HeartbeatRoundResult(sent, returns_at, call.member_after(), after, call.role_changes())

    def candidate_round(self, args: dict):
        member, now, state, draws = args["member"], args["now"], args["state"], args["draws"]
        with self._call(member, (state.preferred_leader, state.term_to_take_leadership)) as call:
            call.set_elector(nextTimeToRequestVote=state.next_time_to_request_vote,
                             needIncreaseTermImmediately=state.need_increase_term_immediately,
                             lastParseResult=self.j.ParseResult.valueOf(state.last_parse_result.value),
                             lastVoteCost=state.last_vote_cost)
            call.set_state(knownMaxTermInGroup=state.known_max_term)
            vt = self.j.VirtualTime
            vt.reset(now)
            vt.draw("vote_wait", draws.vote_wait)
            vt.draw("vote_interval", draws.vote_interval)
            for r in args["replies"]:
                vt.reply(r.peer, r.at, None if r.response is None else self.j.vote_response(r.response))
            call.run("maintainAsCandidate")
            after = CandidateState(
                int(call.get_elector("nextTimeToRequestVote")), bool(call.get_elector("needIncreaseTermImmediately")),
                _parse_result(call.get_elector("lastParseResult")), int(call.get_elector("lastVoteCost")),
                call.get_state("knownMaxTermInGroup"), state.preferred_leader, call.term_to_take_leadership(state.term_to_take_leadership))
            used = tuple(DrawUse(site, int(bound)) for site, bound in (str(d).split(":") for d in vt.drawn()))
            return CandidateRoundResult(int(vt.now()), call.member_after(), after, call.role_changes(), used)

    # ------------------------------------------------------------------ between rounds (recording)

    def maintainer_acts(self, case: dict, until: int = 9000) -> list[int]:
        """When the release's own StateMaintainer acts in ``case``, in ms from its first run.

        StateMaintainer.doWork() (maintainState, then sleep(10)) runs in a loop on the
        virtual clock for a member n1 of three: a LEADER that last sent and succeeded 5000 ms
        ago, both peers answering SUCCESS reply_at ms after each heartbeat (acts_at: the runs
        that sent a round, until 9000 ms); a FOLLOWER whose leader was last heard since ms ago
        (the run that became candidate); a CANDIDATE whose nextTimeToRequestVote is since
        (WAIT_TO_REVOTE, random draws 0: the run that sent vote requests).

        Not an operation of the protocol: it records ``tests/transcripts/dledger/
        maintainer-beat.json`` (``record_maintainer_beat``) and lets a real-build test hold
        the reference node to it.
        """
        role, since = Role[case["role"]], case.get("since", 0)
        leader = {Role.LEADER: "n1", Role.FOLLOWER: "n2", Role.CANDIDATE: None}[role]
        member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, leader, leader, role)
        with self._call(member) as call:
            vt = self.j.VirtualTime
            vt.reset(CALL_TIME)
            vt.draw("vote_wait", 0)
            vt.draw("vote_interval", 0)
            if role is Role.LEADER:
                call.set_elector(lastSendHeartBeatTime=CALL_TIME - 5000, lastSuccHeartBeatTime=CALL_TIME - 5000)
                for peer in ("n2", "n3"):
                    vt.reply(peer, case["reply_at"], self.j.heartbeat_response(HeartBeatResponse(5, ResponseCode.SUCCESS)))
            elif role is Role.FOLLOWER:
                call.set_elector(lastLeaderHeartBeatTime=CALL_TIME - since)
            else:
                call.set_elector(nextTimeToRequestVote=CALL_TIME + since)
            maintainer = call.get_elector("stateMaintainer")
            acts: list[int] = []
            while vt.now() < CALL_TIME + until and not (acts and role is not Role.LEADER):
                before, sent = int(vt.now()), len(vt.sent())
                maintainer.doWork()
                if len(vt.sent()) > sent or (role is Role.FOLLOWER and str(call.state.getRole().name()) != "FOLLOWER"):
                    acts.append(before - CALL_TIME)
            return acts

    OPERATIONS = {"dledger.handle_vote": handle_vote, "dledger.handle_heartbeat": handle_heartbeat,
                  "dledger.heartbeat_round": heartbeat_round, "dledger.candidate_round": candidate_round}


def _parse_result(value):
    return ParseResult[str(value.name())]


class _DLedgerClasses:
    """One build's classes, loaded once through the virtual-time class loader."""

    def __init__(self, jpype, classpath: list[str]):
        self.jpype = jpype
        self.VirtualTime = jpype.JClass("rmqha.jvm.VirtualTime")
        loader_class = jpype.JClass("rmqha.jvm.VirtualTime$Loader")
        url = jpype.JClass("java.net.URL")
        entries = expand_classpath(classpath) + [_slf4j_api()]
        urls = jpype.JArray(url)([jpype.JClass("java.io.File")(e).toURI().toURL() for e in entries])
        jpype.JClass("java.lang.System").setProperty("slf4j.internal.verbosity", "ERROR")
        self.loader = loader_class(urls, self.VirtualTime.class_.getClassLoader())

        def cls(name):
            return jpype.JClass(f"{PACKAGE}.{name}", loader=self.loader)

        self.Config = cls("DLedgerConfig")
        self.MemberState = cls("MemberState")
        self.Role = cls("MemberState$Role")
        self.Elector = cls("DLedgerLeaderElector")
        self.VoteRequest = cls("protocol.VoteRequest")
        self.VoteResponse = cls("protocol.VoteResponse")
        self.Result = cls("protocol.VoteResponse$RESULT")
        self.ParseResult = cls("protocol.VoteResponse$ParseResult")
        self.HeartBeatRequest = cls("protocol.HeartBeatRequest")
        self.HeartBeatResponse = cls("protocol.HeartBeatResponse")
        try:
            self.Server = cls("DLedgerServer")
        except Exception:  # a build without the server class: its checks cannot be asked
            self.Server = None
        unsafe = jpype.JClass("sun.misc.Unsafe").class_.getDeclaredField("theUnsafe")
        unsafe.setAccessible(True)
        self.unsafe = unsafe.get(None)
        self.results = {str(r.name()): r for r in self.Result.values()}
        self.transfer = hasattr(self.Config, "setPreferredLeaderIds")  # leadership transfer: 0.2.0+

        @jpype.JImplements(cls("DLedgerLeaderElector$RoleChangeHandler"))
        class RoleChanges:
            def __init__(self):
                self.seen: list[tuple[int, str]] = []

            @jpype.JOverride
            def handle(self, term, role):
                self.seen.append((int(term), str(role.name())))

            @jpype.JOverride
            def startup(self):
                pass

            @jpype.JOverride
            def shutdown(self):
                pass

        self.RoleChanges = RoleChanges

    def field(self, obj, name: str):
        f = obj.getClass().getDeclaredField(name)
        f.setAccessible(True)
        return f

    def vote_result(self, response):
        name = str(response.getVoteResult().name())
        result = VoteResult.__members__.get(RESULT_ALIASES.get(name, name))
        if result is None:
            raise ValueError(f"handleVote answered {name}, which no release of the spec knows")
        return result

    def vote_response(self, reply):
        """A peer's VoteResponse as this release's class (a result it does not know is an error)."""
        names = [n for n, spec_name in RESULT_ALIASES.items() if spec_name == reply.result.value]
        name = next((n for n in [reply.result.value, *names] if n in self.results), None)
        if name is None:
            raise ValueError(f"this DLedger release has no VoteResponse.RESULT {reply.result.value}")
        response = self.VoteResponse()
        response.setTerm(reply.term)
        response.setVoteResult(self.results[name])
        if hasattr(response, "setCode"):
            response.setCode(int(getattr(reply, "code", 200)))
        return response

    def heartbeat_response(self, reply):
        response = self.HeartBeatResponse()
        response.setTerm(reply.term)
        response.setCode(int(reply.code))
        return response


def _slf4j_api() -> str:
    """pyspark's slf4j-api, last on the build's classpath: DLedger logs through it (a given one wins)."""
    import glob

    import pyspark

    found = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "slf4j-api-*.jar")))
    return found[-1] if found else ""


class _Call:
    """A real MemberState and elector set to a ``MemberView``, and what one call changed."""

    def __init__(self, j: _DLedgerClasses, base: Path, member, taking: tuple[bool, int] | None):
        self.j = j
        self.member = member
        j.VirtualTime.reset(CALL_TIME)
        config = j.Config()
        config.setGroup(member.group)
        config.setSelfId(member.self_id)
        config.setPeers(";".join(f"{p}-127.0.0.1:{20000 + i}" for i, p in enumerate(sorted(member.peers))))
        config.setStoreBaseDir(str(base))
        # leadership transfer exists from 0.2.0 on; in release-0.1 nobody is ever "taking"
        preferred, term_to_take = taking if taking is not None else (member.taking_leadership, member.curr_term)
        if preferred and j.transfer:
            config.setPreferredLeaderIds(member.self_id)
        self.state = state = j.MemberState(config)
        for name, value in (("currTerm", member.curr_term), ("currVoteFor", member.voted_for),
                            ("leaderId", member.leader_id), ("role", j.Role.valueOf(member.role.value)),
                            ("ledgerEndTerm", member.ledger_end_term), ("ledgerEndIndex", member.ledger_end_index),
                            ("knownMaxTermInGroup", -1)):
            j.field(state, name).set(state, value)
        if j.transfer and (preferred or taking is not None):
            state.setTermToTakeLeadership(term_to_take)
        self.elector = j.Elector(config, state, None)
        self.roles = j.RoleChanges()
        self.elector.addRoleChangeHandler(self.roles)
        self.term_file = Path(str(config.getDefaultPath())) / "currterm"

    def request(self, cls, request):
        """``request`` as a Java ``cls``: a vote's candidate is its leaderId, as in DLedger."""
        jreq = cls()
        jreq.setGroup(request.group)
        jreq.setRemoteId(self.member.self_id if request.remote_id is None else request.remote_id)
        jreq.setLeaderId(getattr(request, "candidate", None) or request.leader)
        jreq.setTerm(request.term)
        return jreq

    def server(self):
        """The release's DLedgerServer over this call's MemberState and elector.

        Built without its constructor (which starts the store, the pusher and the RPC
        service, none of which a handler-level call reaches): only the fields
        handleVote/handleHeartBeat read are set.
        """
        if self.j.Server is None:
            raise RuntimeError("this DLedger build has no DLedgerServer: its group and remoteId checks cannot be asked")
        server = self.j.unsafe.allocateInstance(self.j.Server.class_)
        for name, value in (("memberState", self.state), ("dLedgerLeaderElector", self.elector)):
            self.j.field(server, name).set(server, value)
        return server

    def set_elector(self, **values) -> None:
        for name, value in values.items():
            self.j.field(self.elector, name).set(self.elector, value)

    def set_state(self, **values) -> None:
        for name, value in values.items():
            self.j.field(self.state, name).set(self.state, value)

    def get_elector(self, name: str):
        return self.j.field(self.elector, name).get(self.elector)

    def get_state(self, name: str) -> int:
        return int(self.j.field(self.state, name).get(self.state))

    def term_to_take_leadership(self, given: int) -> int:
        """MemberState's transfer term (a release without leadership transfer keeps the one given)."""
        return int(self.state.getTermToTakeLeadership()) if self.j.transfer else given

    def run(self, method: str) -> None:
        """Call one of the elector's private maintain* methods (the real code's exception, unwrapped)."""
        m = self.elector.getClass().getDeclaredMethod(method)
        m.setAccessible(True)
        try:
            m.invoke(self.elector)
        except self.j.jpype.JClass("java.lang.reflect.InvocationTargetException") as exc:
            raise RuntimeError(f"{method} threw {exc.getCause()}") from None

    def member_after(self):
        s = self.state
        vote, leader = s.currVoteFor(), s.getLeaderId()
        return MemberView(self.member.self_id, self.member.peers, int(s.currTerm()),
                          None if vote is None else str(vote), None if leader is None else str(leader),
                          Role(str(s.getRole().name())), int(s.getLedgerEndTerm()), int(s.getLedgerEndIndex()),
                          self.member.taking_leadership)

    def role_changes(self) -> tuple:
        made = {"CANDIDATE": fx.BecomeCandidate, "LEADER": fx.BecomeLeader}
        return tuple(made[role](term) for term, role in self.roles.seen if role in made)

    def __enter__(self) -> "_Call":
        self.term_file.unlink(missing_ok=True)
        self.increase_before = bool(self.j.field(self.elector, "needIncreaseTermImmediately").get(self.elector))
        self.heartbeat_before = int(self.j.field(self.elector, "lastLeaderHeartBeatTime").get(self.elector))
        return self

    def __exit__(self, *exc) -> None:
        self.term_file.unlink(missing_ok=True)

    def effects(self) -> tuple:
        found: list = []
        roles = self.roles.seen
        for term, role in roles:
            if role == "CANDIDATE":
                found.append(fx.BecomeCandidate(term))
            elif role == "FOLLOWER":
                found.append(fx.BecomeFollower(term, str(self.state.getLeaderId())))
            elif role == "LEADER":
                found.append(fx.BecomeLeader(term))
        increase = bool(self.j.field(self.elector, "needIncreaseTermImmediately").get(self.elector))
        if increase and not self.increase_before:
            found.append(fx.INCREASE_TERM_IMMEDIATELY)
        if self.term_file.exists() and self.state.currVoteFor() is not None:
            found.append(fx.SetVotedFor(str(self.state.currVoteFor())))
        heartbeat = int(self.j.field(self.elector, "lastLeaderHeartBeatTime").get(self.elector))
        if heartbeat != self.heartbeat_before and not any(role == "FOLLOWER" for _, role in roles):
            found.append(fx.REFRESH_LEADER_HEARTBEAT)
        return tuple(found)


# the cases of tests/transcripts/dledger/maintainer-beat.json
MAINTAINER_BEAT_CASES = (
    *({"role": "LEADER", "reply_at": at} for at in (7, 30, 37, 1999)),
    *({"role": role, "since": since} for role, since in (("FOLLOWER", 1234), ("FOLLOWER", 1),
                                                         ("CANDIDATE", 1234), ("CANDIDATE", 1235))),
)


def record_maintainer_beat(specs: list[str], source: str) -> dict:
    """``maintainer-beat.json``'s content: each build, given as ``jvm:dledger[=PROFILE]:CLASSPATH``
    (as to ``--adapter``), asked every case of ``MAINTAINER_BEAT_CASES`` (``maintainer_acts``)."""
    records = []
    for spec in specs:
        head, _, classpath = spec.removeprefix("jvm:").partition(":")
        name, _, declared = head.partition("=")
        if not spec.startswith("jvm:") or name != "dledger" or not classpath:
            raise UserError(f"{spec!r}: give each build as jvm:dledger[=PROFILE]:CLASSPATH")
        server = DLedgerElectorServer(split_classpath(classpath), declared or None)
        try:
            records.append({"build": Path(split_classpath(classpath)[0]).name, "version": server.version(),
                            "profile": server.profiles["dledger"],
                            "cases": [{**case, "acts_at": server.maintainer_acts(case)} for case in MAINTAINER_BEAT_CASES]})
        finally:
            server.close()
    return {"what": " ".join(DLedgerElectorServer.maintainer_acts.__doc__.split("\n\n")[1].split()),
            "source": source, "builds": records}
