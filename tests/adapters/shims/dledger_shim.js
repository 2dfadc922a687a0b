#!/usr/bin/env node
// A DLedger handler shim in JavaScript, written from docs/adapter-protocol.md and the
// semantics of DLedgerLeaderElector.handleVote / handleHeartBeat (0.2+ check order).
// It shows what another team writes to plug an implementation into rmqha over stdio:
// read one JSON request per line, answer one JSON response per line.
//
//   node dledger_shim.js                      a conforming shim
//   node dledger_shim.js --bug skip-voted     forgets the already-voted check (must be caught)
'use strict';
const readline = require('readline');

const BUG = process.argv.includes('--bug') ? process.argv[process.argv.indexOf('--bug') + 1] : null;
const NO_TERM = -1;

function reject(result, term) {
  return { '@type': 'VoteDecision', result, reply_term: term, effects: [] };
}

function handleVote(m, r, selfVote) {
  const C = m.curr_term, lt = m.ledger_end_term, li = m.ledger_end_index;
  if (!m.peers.includes(r.candidate)) return reject('REJECT_UNKNOWN_LEADER', C);
  if (!selfVote && r.candidate === m.self_id) return reject('REJECT_UNEXPECTED_LEADER', C);
  if (r.ledger_end_term < lt) return reject('REJECT_EXPIRED_LEDGER_TERM', C);
  if (r.ledger_end_term === lt && r.ledger_end_index < li) return reject('REJECT_SMALL_LEDGER_END_INDEX', C);
  if (r.term < C) return reject('REJECT_EXPIRED_VOTE_TERM', C);
  if (BUG !== 'skip-voted' && r.term === C && m.voted_for !== null && m.voted_for !== r.candidate) {
    return reject(m.leader_id !== null ? 'REJECT_ALREADY_HAS_LEADER' : 'REJECT_ALREADY_VOTED', C);
  }
  if (r.term > C) {
    return { '@type': 'VoteDecision', result: 'REJECT_TERM_NOT_READY', reply_term: C,
             effects: [{ '@type': 'BecomeCandidate', term: r.term }, { '@type': 'IncreaseTermImmediately' }] };
  }
  if (r.term < lt) return reject('REJECT_TERM_SMALL_THAN_LEDGER', lt);
  if (!selfVote && m.taking_leadership && r.ledger_end_term === lt && li >= r.ledger_end_index) {
    return reject('REJECT_TAKING_LEADERSHIP', C);
  }
  return { '@type': 'VoteDecision', result: 'ACCEPT', reply_term: C,
           effects: [{ '@type': 'SetVotedFor', candidate: r.candidate }] };
}

function heartbeat(code, term, effects) {
  return { '@type': 'HeartbeatDecision', code, reply_term: term, effects: effects || [] };
}

function handleHeartbeat(m, r) {
  const C = m.curr_term;
  if (!m.peers.includes(r.leader)) return heartbeat('UNKNOWN_MEMBER', C);
  if (r.leader === m.self_id) return heartbeat('UNEXPECTED_MEMBER', C);
  if (r.term < C) return heartbeat('EXPIRED_TERM', C);
  if (r.term === C) {
    if (m.leader_id === r.leader) return heartbeat('SUCCESS', NO_TERM, [{ '@type': 'RefreshLeaderHeartbeat' }]);
    if (m.leader_id === null) {
      return heartbeat('SUCCESS', NO_TERM, [{ '@type': 'BecomeFollower', term: r.term, leader: r.leader }]);
    }
    return heartbeat('INCONSISTENT_LEADER', NO_TERM);
  }
  return heartbeat('TERM_NOT_READY', NO_TERM,
                   [{ '@type': 'BecomeCandidate', term: r.term }, { '@type': 'IncreaseTermImmediately' }]);
}

const OPERATIONS = {
  'dledger.handle_vote': (a) => handleVote(a.member, a.request, a.self_vote),
  'dledger.handle_heartbeat': (a) => handleHeartbeat(a.member, a.request),
};

function answer(req) {
  const ok = (result) => ({ rmqha: 1, id: req.id, ok: true, result });
  const fail = (code, message) => ({ rmqha: 1, id: req.id, ok: false, error: { code, message } });
  switch (req.op) {
    case 'hello':
      return ok({ protocol: 'rmqha-adapter/1', implementation: 'dledger-shim-js' + (BUG ? '+' + BUG : ''),
                  version: '1.0.0', profiles: { dledger: 'dledger-0.4' },
                  operations: Object.keys(OPERATIONS), nodes: [] });
    case 'call': {
      const op = OPERATIONS[req.args.operation];
      return op ? ok(op(req.args.args)) : fail('unsupported', 'no such operation: ' + req.args.operation);
    }
    case 'bye':
      return ok({});
    default:
      return fail('unsupported', 'no such op: ' + req.op);
  }
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stdout.write(JSON.stringify({ rmqha: 1, id: null, ok: false,
                                          error: { code: 'bad-request', message: 'not JSON' } }) + '\n');
    return;
  }
  let res;
  try {
    res = answer(req);
  } catch (e) {
    res = { rmqha: 1, id: req.id, ok: false, error: { code: 'internal', message: String(e) } };
  }
  process.stdout.write(JSON.stringify(res) + '\n');
  if (req.op === 'bye') rl.close();
});
