// arena_stdio.js: the stdio protocol of Shengji Arena for a Node.js bot, no npm packages.
//
// Copy this file next to your bot and call play with your decide function:
//
//   const { play } = require('./arena_stdio');
//   play((turn) => turn.actions[0]);  // the first listed action is legal
//
// play reads the referee's JSON lines on standard input, keeps what the seat was told (its
// seat, the variant, the latest observation and hint, the events since its previous turn),
// calls decide once per request (synchronously) and writes the answer line,
// {"request_id": ..., "action": {...}}, at once. It logs to standard error (the seat's log;
// standard output carries answers only: never console.log) and stops reading at match_end or
// at the end of input, then calls onEnd if given. A line it cannot read is logged and skipped.
// Field names are the protocol's (turn.observation.hand, ...); request_id and the other 64-bit
// integers arrive as strings and are sent back unchanged. The messages and their fields:
// docs/protocol.md, section 15 (The stdio protocol).

'use strict';

const readline = require('readline');

function log(line) {
  process.stderr.write(`[arena_stdio] ${line}\n`);
}

// An action of `kind` ('ACTION_KIND_PLAY', ...) with `cards` (none for a pass).
function action(kind, cards = []) {
  return { kind, cards };
}

// decide's action; the first listed one, should decide throw.
function decided(decide, turn) {
  try {
    const chosen = decide(turn);
    if (chosen && typeof chosen === 'object') {
      return chosen;
    }
    log(`WARNING decide answered ${chosen}; answering the first listed action`);
  } catch (e) {
    const why = e && e.stack ? e.stack : e;
    log(`WARNING decide failed: ${why}; answering the first listed action`);
  }
  return turn.actions.length > 0 ? turn.actions[0] : action('ACTION_KIND_PASS');
}

// Answers the referee's requests with decide(turn) until the match ends. The turn:
//   seat, variant       this bot's seat (0-3) and the variant id, from the welcome
//   kind                the decision: 'DECISION_KIND_LEAD', 'DECISION_KIND_FOLLOW', ...
//   observation         the seat's view (docs/protocol.md, section 6)
//   actions             hint.actions: never empty, every one legal
//   complete, note      hint.complete (actions holds every legal action) and hint.note
//   time_left_ms, bank_left_ms   this decision's allowance and the time bank (strings)
//   events              every event since the previous turn, those of notices included
function play(decide, onEnd = () => {}) {
  const turn = {
    seat: -1, variant: '', kind: '', observation: {}, actions: [], complete: false, note: '',
    time_left_ms: '0', bank_left_ms: '0', events: [],
  };
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  process.stdout.on('error', (e) => end(`WARNING writing an answer: ${e.message}`));
  let over = false;
  const end = (why) => {
    if (!over) {
      over = true;
      log(why);
      input.close();
      process.stdin.destroy();
      onEnd();
    }
  };
  input.on('line', (line) => {
    if (over || line.trim() === '') {
      return;
    }
    let m;
    try {
      m = JSON.parse(line);
    } catch (e) {
      log(`WARNING unreadable line from the referee (${line.length} characters): ${e.message}`);
      return;
    }
    switch (m && m.type) {
      case 'welcome':
        turn.seat = m.seat;
        turn.variant = m.variant;
        log(`INFO welcome: seat ${m.seat}, variant ${m.variant}`);
        break;
      case 'notice':
        turn.events.push(...(m.events || []));
        break;
      case 'request': {
        const hint = m.hint || {};
        Object.assign(turn, {
          kind: m.kind, observation: m.observation || {}, actions: hint.actions || [],
          complete: hint.complete === true, note: hint.note || '',
          time_left_ms: m.time_left_ms, bank_left_ms: m.bank_left_ms,
        });
        turn.events.push(...(m.events || []));
        const answer = { request_id: m.request_id, action: decided(decide, turn) };
        turn.events = [];
        // (a write to a pipe is synchronous on Linux: nothing is left in a buffer)
        process.stdout.write(`${JSON.stringify(answer)}\n`);
        break;
      }
      case 'rejection': {
        const played = m.default_action || {};
        log(`WARNING rejected: request ${m.request_id}: ${m.reason} (strikes ${m.strikes}, ` +
            `the referee played ${played.kind} ${JSON.stringify(played.cards)})`);
        break;
      }
      case 'match_end':
        end(`INFO match end: ${m.reason}`);
        break;
      default:
        break; // a message type added later
    }
  });
  input.on('close', () => end('INFO end of input'));
}

module.exports = { play, action, log };
