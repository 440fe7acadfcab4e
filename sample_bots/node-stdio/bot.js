// node-stdio-sample: a Shengji Arena bot in Node.js with no npm packages. arena_stdio.js speaks
// the stdio protocol (docs/protocol.md, section 15) and calls choose once per decision; choose
// answers with one of the request's listed legal actions (ties: the first listed). Logs go to
// standard error, the seat's log.

'use strict';

const { play, action } = require('./arena_stdio');

const NAME = 'node-stdio-sample';
const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A', 'LJ', 'BJ'];

// A card's rank: 2 .. A as 0 .. 12, the little joker 13, the big joker 14.
function rank(card) {
  return RANKS.indexOf(card === 'LJ' || card === 'BJ' ? card : card.slice(0, -1));
}

// The action with the fewest cards, then the highest (or lowest) ranks.
function fewest(actions, highest) {
  const score = (a) => {
    const sum = a.cards.reduce((total, card) => total + rank(card), 0);
    return -1000 * a.cards.length + (highest ? sum : -sum);
  };
  return actions.reduce((best, a) => (score(a) > score(best) ? a : best));
}

function passOrFirst(actions) {
  return actions.find((a) => a.kind === 'ACTION_KIND_PASS') || actions[0];
}

function choose(turn) {
  const { actions, observation } = turn;
  if (actions.length === 0) {
    return action('ACTION_KIND_PASS'); // (never: the referee always lists one)
  }
  switch (turn.kind) {
    case 'DECISION_KIND_LEAD':
      return fewest(actions, true);
    case 'DECISION_KIND_FOLLOW':
      return fewest(actions, false);
    case 'DECISION_KIND_DECLARE': {
      // pass, but at the final chances when nobody has declared: then declare (four bots that
      // always pass would never fix a trump)
      const declares = actions.filter((a) => a.kind === 'ACTION_KIND_DECLARE');
      if (observation.phase === 'declare_round' && observation.declarations.length === 0 &&
          declares.length > 0) {
        return fewest(declares, true);
      }
      return passOrFirst(actions);
    }
    case 'DECISION_KIND_BURY':
    case 'DECISION_KIND_RETURN':
      return actions[0];
    default: // REDEAL, UPRISING, ...: optional, pass when allowed
      return passOrFirst(actions);
  }
}

let decisions = 0;
process.stderr.write(`[${NAME}] INFO seat ${process.env.ARENA_SEAT} of match ` +
                     `${process.env.ARENA_MATCH_ID}\n`);
play((turn) => {
  decisions += 1;
  return choose(turn);
}, () => process.stderr.write(`[${NAME}] INFO done: ${decisions} decisions\n`));
