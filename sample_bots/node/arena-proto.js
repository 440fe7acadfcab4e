// Loaded before bot.js (node --require ./arena-proto.js): the protocol file is the copy in this
// folder, since a bot built from its own folder has nothing of the arena's beside it.
const path = require('path');

if (!process.env.ARENA_PROTO) {
  process.env.ARENA_PROTO = path.join(__dirname, 'protos', 'shengji_arena', 'v1', 'referee.proto');
}
