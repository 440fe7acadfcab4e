#!/usr/bin/env node
// Sample Shengji Arena bot (Node.js): plays one seat of a match over the referee's gRPC protocol.
//
// The referee starts this script as its own process with:
//   ARENA_REFEREE   the referee's address: "unix:///abs/path/seatN.sock" or "host:port"
//   ARENA_SEAT      this bot's seat, 0-3
//   ARENA_TOKEN     the seat token, sent in Hello
//   ARENA_MATCH_ID  the match id (used in log lines only)
//   ARENA_PROTO_DIR the folder of shengji_arena/v1/referee.proto, the referee's own (set by the
//                   referee; default: ../../protos relative to this script's directory)
//   ARENA_PROTO     optional: the path of referee.proto itself (overrides ARENA_PROTO_DIR)
//
// It opens one Referee.Play stream, sends Hello, answers every DecisionRequest with one of the
// actions listed in request.hint.actions, and exits 0 on MatchEnd or when the stream ends.
// Exit codes: 0 match over / stream ended, 1 connection or stream error, 2 bad configuration.
//
// The strategy is in chooseAction() below; everything else is plumbing.

'use strict';

const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_NAME = 'node-sample';
const BOT_VERSION = '1.0.0';
const PROTOCOL = 'shengji-arena/1';

// Field names stay as written in the .proto (snake_case: request_id, match_end, bot_name...).
// uint64/int64 fields arrive as decimal strings, enums as their names ("ACTION_KIND_PASS").
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

// ---- logging -----------------------------------------------------------------------------

let logPrefix = `[${BOT_NAME}]`;

function log(line) {
  process.stderr.write(`${logPrefix} ${line}\n`);
}

function fail(code, line) {
  log(`error: ${line}`);
  process.exit(code);
}

// ---- configuration -----------------------------------------------------------------------

function readConfig(env) {
  const missing = ['ARENA_REFEREE', 'ARENA_SEAT', 'ARENA_TOKEN'].filter((name) => !env[name]);
  if (missing.length > 0) {
    fail(2, `missing environment variable(s) ${missing.join(', ')}. This bot is started by the ` +
      'Shengji Arena referee, which sets ARENA_REFEREE (address), ARENA_SEAT (0-3), ARENA_TOKEN ' +
      'and ARENA_MATCH_ID; see README.md.');
  }
  const seatText = env.ARENA_SEAT.trim();
  if (!/^[0-3]$/.test(seatText)) {
    fail(2, `ARENA_SEAT must be 0, 1, 2 or 3, got ${JSON.stringify(env.ARENA_SEAT)}`);
  }
  // The referee names its protocol folder in ARENA_PROTO_DIR; ARENA_PROTO (a file) overrides it,
  // and a checkout of the arena is the fallback.
  const protoDir = env.ARENA_PROTO_DIR || path.resolve(__dirname, '..', '..', 'protos');
  const protoPath = env.ARENA_PROTO
    ? path.resolve(env.ARENA_PROTO)
    : path.resolve(protoDir, 'shengji_arena', 'v1', 'referee.proto');
  return {
    address: env.ARENA_REFEREE.trim(),
    seat: Number(seatText),
    token: env.ARENA_TOKEN,
    matchId: env.ARENA_MATCH_ID || '?',
    protoPath,
  };
}

function loadRefereeService(protoPath) {
  if (!fs.existsSync(protoPath)) {
    fail(2, `protocol file not found: ${protoPath} (the referee sets ARENA_PROTO_DIR; ARENA_PROTO may name the file)`);
  }
  let pkg;
  try {
    const definition = protoLoader.loadSync(protoPath, LOADER_OPTIONS);
    pkg = grpc.loadPackageDefinition(definition);
  } catch (err) {
    fail(2, `cannot load ${protoPath}: ${err.message}`);
  }
  const service = pkg.shengji_arena && pkg.shengji_arena.v1 && pkg.shengji_arena.v1.Referee;
  if (!service) {
    fail(2, `${protoPath} does not define shengji_arena.v1.Referee`);
  }
  return service;
}

// ---- strategy ----------------------------------------------------------------------------

// Rank strength: 2 lowest ... A, then the small joker (LJ) and the big joker (BJ).
const RANK_ORDER = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A', 'LJ', 'BJ'];
const RANK_VALUE = new Map(RANK_ORDER.map((rank, i) => [rank, i]));

// "10H" -> "10", "QS" -> "Q", "LJ" -> "LJ".
function cardRank(card) {
  if (card === 'LJ' || card === 'BJ') return card;
  return card.slice(0, -1);
}

function rankValue(card) {
  const value = RANK_VALUE.get(cardRank(card));
  return value === undefined ? -1 : value;
}

// Sort key of a PLAY action: [number of cards, strongest card, total of the ranks].
function playKey(action) {
  const values = action.cards.map(rankValue);
  return [values.length, Math.max(-1, ...values), values.reduce((a, b) => a + b, 0)];
}

function isPass(action) {
  return action.kind === 'ACTION_KIND_PASS';
}

// LEAD: fewest cards, then the highest ranks. FOLLOW: fewest cards, then the lowest ranks.
// Ties keep the referee's order, so the choice is deterministic for a given request.
function choosePlay(actions, leading) {
  const candidates = actions.filter((action) => !isPass(action));
  if (candidates.length === 0) return actions[0];
  const direction = leading ? -1 : 1;
  let best = candidates[0];
  let bestKey = playKey(best);
  for (const action of candidates.slice(1)) {
    const key = playKey(action);
    const better =
      key[0] !== bestKey[0] ? key[0] < bestKey[0]
        : key[1] !== bestKey[1] ? direction * (key[1] - bestKey[1]) < 0
          : direction * (key[2] - bestKey[2]) < 0;
    if (better) {
      best = action;
      bestKey = key;
    }
  }
  return best;
}

// request: a DecisionRequest; request.hint.actions is never empty and every action in it is
// legal. Returns one of those actions. Change this function to change how the bot plays:
// request.observation has the seat's hand, the trump, the current trick, the levels...
function chooseAction(request) {
  const actions = request.hint.actions;
  switch (request.kind) {
    case 'DECISION_KIND_LEAD':
      return choosePlay(actions, true);
    case 'DECISION_KIND_FOLLOW':
      return choosePlay(actions, false);
    case 'DECISION_KIND_DECLARE': {
      // Pass, except at the final chances (after the last card) when nobody has declared yet:
      // then declare with the fewest cards. Otherwise a table of four such bots would never fix
      // a trump (two-deck-80 redeals its first deal until somebody declares).
      const obs = request.observation || {};
      const nobodyDeclared = (obs.declarations || []).length === 0;
      const declares = actions.filter((action) => action.kind === 'ACTION_KIND_DECLARE');
      if (obs.phase === 'declare_round' && nobodyDeclared && declares.length > 0) {
        return declares.reduce((best, a) => (a.cards.length < best.cards.length ? a : best));
      }
      return actions.find(isPass) || actions[0];
    }
    default: {
      // REDEAL, UPRISING, HANDOVER, TRANSFER, DUN_REVEAL, JOKER_BURY are optional: decline.
      // BURY and RETURN have no PASS: take the first listed action.
      const pass = actions.find(isPass);
      return pass || actions[0];
    }
  }
}

// ---- protocol ----------------------------------------------------------------------------

function answerFor(request) {
  const actions = (request.hint && request.hint.actions) || [];
  let action;
  if (actions.length === 0) {
    // The referee promises this never happens; answer something rather than stall.
    log(`request ${request.request_id}: no hint actions, answering PASS`);
    action = { kind: 'ACTION_KIND_PASS' };
  } else {
    try {
      action = chooseAction(request);
    } catch (err) {
      log(`request ${request.request_id}: strategy failed (${err.message}), using the first hint`);
      action = actions[0];
    }
    if (!action) action = actions[0];
  }
  return {
    answer: {
      request_id: request.request_id, // uint64 as a string, sent back unchanged
      action: {
        kind: action.kind,
        cards: action.cards || [],
        suit: action.suit || '',
        take: action.take || [],
      },
    },
  };
}

function describeEvents(events) {
  const kinds = new Map();
  for (const event of events || []) kinds.set(event.kind, (kinds.get(event.kind) || 0) + 1);
  return [...kinds].map(([kind, n]) => (n > 1 ? `${kind}x${n}` : kind)).join(' ') || 'no events';
}

function describeFailure(status, address, connected) {
  // grpc-js may end connection errors with an empty "Resolution note:"; drop it.
  const detail = (status.details || '').replace(/\s*Resolution note:\s*$/, '') || 'no details';
  // A referee that stops mid-match resets the stream: grpc-js reports that as INTERNAL
  // ("Received RST_STREAM ...") or CANCELLED, although nothing went wrong in this process.
  const reset = status.code === grpc.status.CANCELLED ||
    (status.code === grpc.status.INTERNAL && /RST_STREAM|Session closed/.test(detail));
  if (connected && reset) {
    return `lost the connection to the referee at ${address} (the referee reset the stream): ` +
      detail;
  }
  switch (status.code) {
    case grpc.status.UNAVAILABLE:
      return connected
        ? `lost the connection to the referee at ${address}: ${detail}`
        : `cannot reach the referee at ${address}: ${detail}`;
    case grpc.status.PERMISSION_DENIED:
      return `the referee refused the seat token: ${detail}`;
    case grpc.status.ALREADY_EXISTS:
      return `this seat is already connected: ${detail}`;
    case grpc.status.UNIMPLEMENTED:
      return `${address} does not serve shengji_arena.v1.Referee/Play: ${detail}`;
    default:
      return `stream failed with ${grpc.status[status.code] || status.code}: ${detail}`;
  }
}

function main() {
  const config = readConfig(process.env);
  logPrefix = `[${BOT_NAME} match ${config.matchId} seat ${config.seat}]`;
  const Referee = loadRefereeService(config.protoPath);

  const client = new Referee(config.address, grpc.credentials.createInsecure());
  const call = client.Play();
  let matchOver = false;
  let connected = false; // a message has arrived from the referee
  let exiting = false;

  function exit(code) {
    if (exiting) return;
    exiting = true;
    client.close();
    process.exit(code);
  }

  // Every call ends with exactly one 'status'; 'error' repeats a non-OK status and is only
  // listened to so that Node does not treat it as unhandled.
  call.on('error', () => {});
  call.on('status', (status) => {
    if (matchOver) return exit(0);
    if (status.code === grpc.status.OK) {
      log('the referee closed the stream');
      return exit(0);
    }
    fail(1, describeFailure(status, config.address, connected));
  });

  call.on('data', (message) => {
    connected = true;
    switch (message.body) {
      case 'request': {
        call.write(answerFor(message.request));
        break;
      }
      case 'welcome': {
        const w = message.welcome;
        const mismatch = w.seat !== config.seat ? ` (warning: ARENA_SEAT is ${config.seat})` : '';
        const perDecision = (w.time_control && w.time_control.per_decision_ms) || '?';
        log(`welcome: match ${w.match_id}, seat ${w.seat}${mismatch}, variant ${w.variant}, ` +
          `protocol ${w.protocol}, ${perDecision} ms per decision`);
        break;
      }
      case 'notice': {
        const n = message.notice;
        log(`notice ${n.reason}: ${describeEvents(n.events)}`);
        break;
      }
      case 'rejection': {
        const r = message.rejection;
        const d = r.default_action || {};
        log(`rejection of request ${r.request_id}: ${r.reason} (strikes ${r.strikes}; the referee ` +
          `played ${d.kind} ${(d.cards || []).join(' ')})`);
        break;
      }
      case 'match_end': {
        const e = message.match_end;
        log(`match end (${e.reason}): ${e.result_json}`);
        matchOver = true;
        call.end(); // half-close; exit when the referee closes its side, or after 1 s
        setTimeout(() => exit(0), 1000);
        break;
      }
      default:
        log(`ignoring a message of unknown kind ${message.body}`);
    }
  });

  call.write({
    hello: {
      token: config.token,
      bot_name: BOT_NAME,
      bot_version: BOT_VERSION,
      protocol: PROTOCOL,
    },
  });
}

if (require.main === module) {
  main();
}

module.exports = { chooseAction, rankValue };
