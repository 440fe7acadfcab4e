// A person's seat at the table: reads the game's event stream (each message one line the
// referee sent this seat, or the game's state), draws what the seat sees, and answers the open
// request with one of the moves the referee's hint allows. It decides nothing about the rules:
// the referee judges every answer. Every message received is kept in window.playLog.
(function () {
  "use strict";
  const root = document.getElementById("table");
  if (!root) return;
  const SEAT = Number(root.dataset.seat);
  const STREAM = root.dataset.stream;
  const ANSWER = root.dataset.answer;
  const CSRF = root.dataset.csrf;
  const SUIT = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const POS = ["south", "east", "north", "west"];
  // the actions answered with cards chosen from the hand; any other is one button per action
  const CARD_KINDS = new Set(["ACTION_KIND_PLAY", "ACTION_KIND_BURY", "ACTION_KIND_RETURN"]);
  const KIND_WORDS = {
    ACTION_KIND_PASS: "pass", ACTION_KIND_DECLARE: "declare", ACTION_KIND_REDEAL:
    "demand a redeal", ACTION_KIND_BURY: "bury", ACTION_KIND_PLAY: "play",
    ACTION_KIND_UPRISING: "rise up", ACTION_KIND_HANDOVER: "hand the deal to your partner",
    ACTION_KIND_TRANSFER: "pass your trump to your partner", ACTION_KIND_RETURN: "give back",
    ACTION_KIND_REVEAL_DUN: "show the dun", ACTION_KIND_BURY_JOKERS: "bury jokers",
  };
  const log = [];
  window.playLog = log;

  // What the seat knows, rebuilt from the messages in order (a reload replays them all).
  const S = {
    seq: 0, maxStrikes: null, strikes: 0, deal: 0,
    hand: [], trump: "", level: "", levels: null, dealer: -1, attackerPoints: 0,
    tricksPlayed: 0, handSizes: [0, 0, 0, 0], declarations: [],
    trick: [], trickLeader: -1, lastTrick: null, showLast: false,
    request: null, receivedAt: 0, answered: false, selected: new Set(), sorted: [],
    dealResult: null, levelsBefore: null, matchEnd: null,
    game: { state: root.dataset.state, reason: null, record_url: null, replay_url: null },
    messages: [], feed: [], reconnecting: false,
  };

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const NAMES = [0, 1, 2, 3].map((s) => {
    const box = root.querySelector('.seat-box[data-seat="' + s + '"]');
    return (box && box.dataset.name) || "";
  });
  // a seat's name, with its number where another seat has the same bot
  function seatName(s) {
    if (s === SEAT) return "you";
    const name = NAMES[s];
    if (!name) return "seat " + s;
    return NAMES.filter((n) => n === name).length > 1 ? name + " (seat " + s + ")" : name;
  }
  function seatFull(s) {  // a seat's name and number
    const name = seatName(s);
    return name.endsWith(" (seat " + s + ")") ? name : name + " (seat " + s + ")";
  }
  const posOf = (s) => POS[(s - SEAT + 4) % 4];
  const teamOf = (s) => s % 2;
  const parsed = (text) => { try { return JSON.parse(text); } catch (e) { return {}; } };

  // -- cards -------------------------------------------------------------------------------
  const isJoker = (t) => t === "BJ" || t === "LJ";
  const rankOf = (t) => t.slice(0, -1);
  const suitOf = (t) => t.slice(-1);
  const isRed = (t) => t === "BJ" || suitOf(t) === "H" || suitOf(t) === "D";
  function isTrump(t) {
    if (isJoker(t)) return true;
    if (S.trump === "") return false;
    return rankOf(t) === S.level || suitOf(t) === S.trump;
  }

  // The side suits in the order drawn: colours alternate where they can.
  function sideSuits() {
    const rest = ["S", "H", "C", "D"].filter((s) => s !== S.trump);
    if (rest.length === 4) return rest;
    const black = rest.filter((s) => s === "S" || s === "C");
    const red = rest.filter((s) => s === "H" || s === "D");
    return black.length === 2 ? [black[0], ...red, black[1]] : [red[0], ...black, red[1]];
  }

  // The hand as a player holds it: trumps in trump order (big joker, small joker, the trump
  // suit's level card, the other level cards, the trump suit high to low), then each side
  // suit high to low. Before the trump is fixed the jokers and level cards are kept apart.
  function handGroups(hand) {
    const suits = sideSuits();
    const hasSuit = S.trump !== "" && S.trump !== "none";
    const groups = [{ key: "trump", label: S.trump === "" ? "jokers and level cards"
      : "trumps", cards: [] }];
    for (const s of suits) groups.push({ key: s, label: SUIT[s] + " " + SUIT_NAME[s], cards: [] });
    const order = (t) => {
      if (t === "BJ") return 0;
      if (t === "LJ") return 1;
      const r = rankOf(t), s = suitOf(t);
      if (r === S.level) return s === S.trump ? 2 : 3 + "SHCD".indexOf(s) / 10;
      return 10 + (12 - RANKS.indexOf(r));
    };
    for (const t of hand) {
      const trumpish = isJoker(t) || rankOf(t) === S.level || (hasSuit && suitOf(t) === S.trump);
      const g = trumpish ? groups[0] : groups.find((x) => x.key === suitOf(t));
      (g || groups[0]).cards.push(t);
    }
    for (const g of groups) g.cards.sort((a, b) => order(a) - order(b));
    return groups.filter((g) => g.cards.length);
  }

  function cardEl(t, tag) {
    const c = el(tag || "span", "card " + (isRed(t) ? "red" : "black"));
    c.dataset.card = t;
    c.title = t;
    if (isJoker(t)) {
      c.classList.add("joker");
      c.append(el("span", "rank", t === "BJ" ? "BIG" : "SMALL"), el("span", "suit", "\u2605"),
               el("span", "joker-word", "JOKER"));
    } else {
      c.append(el("span", "rank", rankOf(t)), el("span", "suit", SUIT[suitOf(t)] || suitOf(t)));
    }
    if (S.trump !== "" && isTrump(t)) c.classList.add("trump");
    return c;
  }
  function cardsEl(list, cls) {
    const box = el("span", "cards" + (cls ? " " + cls : ""));
    for (const t of list) box.append(cardEl(t));
    return box;
  }
  function take(list, cards) {  // list less one copy of each of cards
    const out = list.slice();
    for (const t of cards) {
      const i = out.indexOf(t);
      if (i >= 0) out.splice(i, 1);
    }
    return out;
  }
  const sameCards = (a, b) => a.length === b.length &&
    a.slice().sort().join(" ") === b.slice().sort().join(" ");
  function within(part, whole) {  // part is a sub-multiset of whole
    return take(whole, part).length === whole.length - part.length;
  }
  function actionWords(a) {
    const words = [KIND_WORDS[a.kind] || a.kind.replace("ACTION_KIND_", "").toLowerCase()];
    if (a.cards && a.cards.length) words.push(a.cards.join(" "));
    if (a.suit) words.push("naming " + a.suit);
    if (a.take && a.take.length) words.push("taking back " + a.take.join(" "));
    return words.join(" ");
  }

  // -- messages from the stream ------------------------------------------------------------
  function say(cls, text) {
    S.messages.push({ cls, text });
    if (S.messages.length > 6) S.messages.shift();
  }
  function feed(text) {
    S.feed.push(text.charAt(0).toUpperCase() + text.slice(1));
    if (S.feed.length > 60) S.feed.shift();
  }

  function applyEvent(e) {
    const j = parsed(e.json);
    const who = e.seat >= 0 ? seatName(e.seat) : "";
    switch (e.kind) {
      case "DealStarted":
        Object.assign(S, { deal: j.deal || 0, hand: [], trump: "", declarations: [], trick: [],
          trickLeader: -1, lastTrick: null, showLast: false, attackerPoints: 0,
          tricksPlayed: 0, handSizes: [0, 0, 0, 0] });
        S.dealer = typeof j.dealer === "number" ? j.dealer : -1;
        if (Array.isArray(j.levels) && j.levels.length === 2) {
          S.levels = j.levels;
          // the level rank: the dealer team's, or both teams' while they are equal
          if (S.dealer >= 0) S.level = j.levels[teamOf(S.dealer)];
          else if (j.levels[0] === j.levels[1]) S.level = j.levels[0];
        }
        feed(j.redeal ? "The cards are dealt again." : "Deal " + (S.deal + 1) + " starts: " +
             seatName(j.first_receiver) + " receive" + (j.first_receiver === SEAT ? "" : "s") +
             " the first card.");
        break;
      case "CardDealt":
        if (e.seat === SEAT) S.hand.push(e.cards[0]);
        if (e.seat >= 0) S.handSizes[e.seat] += 1;
        break;
      case "Declared": {
        const showing = { seat: e.seat, cards: e.cards };
        S.declarations = S.declarations.concat([showing]);  // (as the observation lists them)
        if (j.trump) S.trump = j.trump;
        feed(who + (j.overturn ? " overturn" : " declare") + (e.seat === SEAT ? " " : "s ") +
             e.cards.join(" ") + ": " + trumpWords(j.trump) + ".");
        break;
      }
      case "DealerSet":
        S.dealer = e.seat;
        if (j.level) S.level = j.level;
        feed(who + (e.seat === SEAT ? " are" : " is") + " the dealer" +
             (j.reason ? " (" + j.reason + ")" : "") + ".");
        break;
      case "KittyCardDrawn":
        if (j.trump) S.trump = j.trump;
        feed("Nobody declared: the kitty card " + e.cards.join(" ") + " is drawn: " +
             trumpWords(j.trump) + ".");
        break;
      case "KittyTaken":
        if (e.seat === SEAT) {
          S.hand = S.hand.concat(e.cards);
          feed("You take up the kitty: " + e.cards.join(" ") + ".");
        }
        break;
      case "KittyTakenPublic":
        if (e.seat !== SEAT) feed(who + " takes up the kitty.");
        break;
      case "Buried":
        if (e.seat === SEAT) {
          S.hand = take(S.hand, e.cards);
          feed("You bury " + e.cards.join(" ") + ".");
        }
        break;
      case "BuriedPublic":
        if (e.seat !== SEAT) feed(who + " buries the kitty.");
        break;
      case "Played":
        if (j.lead || S.trick.length >= 4) { S.trick = []; S.trickLeader = e.seat; }
        S.trick.push({ seat: e.seat, cards: e.cards });
        S.showLast = false;
        if (e.seat === SEAT) S.hand = take(S.hand, e.cards);
        if (e.seat >= 0) S.handSizes[e.seat] = Math.max(0, S.handSizes[e.seat] - e.cards.length);
        break;
      case "ThrowFailed":
        feed(who + (e.seat === SEAT ? "r" : "'s") + " throw " + (j.attempted || []).join(" ") +
             " fails: " + (j.forced || []).join(" ") + " is played" +
             (j.penalty ? " (penalty " + j.penalty + ")" : "") + ".");
        break;
      case "TrickWon": {
        const attackers = S.dealer >= 0 && teamOf(e.seat) !== teamOf(S.dealer);
        S.lastTrick = { plays: S.trick, leader: S.trickLeader, winner: e.seat,
                        points: j.points || 0, number: j.trick };
        S.trick = [];
        S.trickLeader = -1;
        if (typeof j.trick === "number") S.tricksPlayed = j.trick;
        if (attackers) S.attackerPoints += j.points || 0;
        feed("Trick " + j.trick + ": " + who + " win" + (e.seat === SEAT ? "" : "s") +
             (j.points ? ", " + j.points + " points" + (attackers ? " for the attackers" : "")
               : "") + ".");
        break;
      }
      case "DealEnded":
        S.levelsBefore = S.levels;
        S.dealResult = j;
        if (j.levels) S.levels = j.levels;
        feed("Deal " + ((j.deal || 0) + 1) + " is over: the attackers' total is " +
             j.attacker_total + ".");
        break;
      case "GameEnded":
        feed(j.winner_team === null || j.winner_team === undefined ? "The deals are played."
          : "Team " + j.winner_team + " wins the game.");
        break;
      case "RedealDemanded":
        feed(who + (e.seat === SEAT ? " demand" : " demands") + " a redeal.");
        break;
      case "Passed":
        break;
      default:
        feed(e.kind + (who ? " (" + who + ")" : "") +
             (e.cards && e.cards.length ? ": " + e.cards.join(" ") : "") + ".");
    }
  }

  function trumpWords(t) {
    if (!t) return "no trump yet";
    if (t === "none") return "no trump suit";
    return SUIT_NAME[t] + " are trump";
  }

  function adopt(o) {  // a request's observation: the seat's view, authoritative
    S.hand = o.hand.slice();
    S.trump = o.trump || "";
    S.level = o.level || S.level;
    S.levels = o.levels && o.levels.length ? o.levels : S.levels;
    S.dealer = typeof o.dealer === "number" ? o.dealer : -1;
    S.attackerPoints = o.attacker_points || 0;
    S.tricksPlayed = o.tricks_played || 0;
    if (o.hand_sizes && o.hand_sizes.length === 4) S.handSizes = o.hand_sizes.slice();
    S.declarations = (o.declarations || []).map((d) => ({ seat: d.seat, cards: d.cards }));
    S.trick = (o.trick || []).map((p) => ({ seat: p.seat, cards: p.cards }));
    S.trickLeader = S.trick.length ? o.trick_leader : -1;
  }

  function settleRequest() {
    S.request = null;
    S.answered = false;
    S.selected = new Set();
  }

  function onLine(line) {
    if (line.type !== "rejection") settleRequest();
    switch (line.type) {
      case "welcome":
        S.maxStrikes = line.time_control ? line.time_control.max_strikes : null;
        feed("The match starts: " + line.variant + ".");
        break;
      case "notice":
        for (const e of line.events || []) applyEvent(e);
        break;
      case "request":
        for (const e of line.events || []) applyEvent(e);
        adopt(line.observation || { hand: [] });
        S.request = line;
        S.answered = false;
        S.selected = new Set();
        S.receivedAt = performance.now();
        break;
      case "rejection": {
        if (S.request && S.request.request_id === line.request_id) settleRequest();
        S.strikes = line.strikes;
        const late = /^timeout/.test(line.reason || "");
        const strikes = "Strike " + line.strikes + (S.maxStrikes ? " of " + S.maxStrikes : "");
        const instead = line.default_action ? actionWords(line.default_action) : "a move";
        say(late ? "timeout" : "rejection", (late ? "Your time ran out" : "Not accepted: " +
            line.reason) + ". The referee played for you instead: " + instead + ". " +
            strikes + (S.maxStrikes ? " (at " + S.maxStrikes + " your team forfeits)" : "") +
            ".");
        break;
      }
      case "match_end": {
        S.matchEnd = { reason: line.reason, result: parsed(line.result_json) };
        feed("The match is over (" + line.reason + ").");
        break;
      }
    }
  }

  function onGame(m) {
    S.game = { state: m.state, reason: m.reason, record_url: m.record_url,
               replay_url: m.replay_url };
    if (m.state === "failed") say("error", "The game failed" + (m.reason ? ": " + m.reason
      : "") + ".");
  }

  function receive(m) {
    if (!m || typeof m !== "object") return;
    if (typeof m.seq === "number") {
      if (m.seq <= S.seq) return;  // already seen (a reconnection's overlap)
      S.seq = m.seq;
    }
    log.push(m);
    if (m.type === "line" && m.line) onLine(m.line);
    else if (m.type === "game") onGame(m);
    if (S.game.state === "over" || S.game.state === "failed") stop();
    soon();
  }

  // -- the stream --------------------------------------------------------------------------
  let source = null;
  let retry = 1000;
  let finished = false;
  function connect() {
    const url = STREAM + (S.seq ? (STREAM.includes("?") ? "&" : "?") + "after=" + S.seq : "");
    source = new EventSource(url);
    source.onopen = () => { S.reconnecting = false; retry = 1000; soon(); };
    source.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      receive(m);
    };
    source.onerror = () => {
      if (finished) return;
      S.reconnecting = true;
      soon();
      if (source.readyState === EventSource.CLOSED) {  // refused: open again, from S.seq
        source.close();
        setTimeout(() => { if (!finished) connect(); }, retry);
        retry = Math.min(retry * 2, 15000);
      }  // else the browser reconnects by itself, with Last-Event-ID
    };
  }
  function stop() {
    finished = true;
    S.reconnecting = false;
    if (source) source.close();
  }

  // -- answering ---------------------------------------------------------------------------
  async function answer(action) {
    const req = S.request;
    if (!req || S.answered) return;
    S.answered = true;
    render();
    let status = 0, detail = "";
    try {
      const r = await fetch(ANSWER, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json",
                   "X-CSRF-Token": CSRF },
        body: JSON.stringify({ request_id: req.request_id, action: action }),
      });
      status = r.status;
      if (!r.ok) {
        const body = await r.json().catch(() => ({}));
        detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      }
    } catch (e) {
      detail = "the server could not be reached";
    }
    if (status >= 200 && status < 300) return;
    if (S.request !== req) return;  // settled meanwhile
    if (status === 409) {
      say("error", "That decision is closed: " + (detail || "answered or timed out") + ".");
    } else {
      S.answered = false;  // may be tried again
      say("error", "Your answer was not sent (" + (status ? "HTTP " + status + ": " : "") +
          (detail || "no reason given") + ").");
    }
    render();
  }

  // The open request's choices: card actions (chosen on the hand) and buttons.
  function choices() {
    const req = S.request;
    if (!req || S.answered) return null;
    const hint = req.hint || { actions: [], complete: false, note: "" };
    const cardActions = hint.actions.filter((a) => CARD_KINDS.has(a.kind));
    const buttons = hint.actions.filter((a) => !CARD_KINDS.has(a.kind));
    let size = null;  // cards to choose when the hint is not complete; null: one or more
    if (!hint.complete && cardActions.length) {
      const counts = new Set(cardActions.map((a) => a.cards.length));
      if (req.kind === "DECISION_KIND_FOLLOW" && S.trick.length) size = S.trick[0].cards.length;
      else if (req.kind !== "DECISION_KIND_LEAD" && counts.size === 1) size = [...counts][0];
    }
    return { hint, cardActions, buttons, size };
  }

  function selectedCards(sorted) {
    return [...S.selected].sort((a, b) => a - b).map((i) => sorted[i]);
  }

  // Whether card t may be added to the current selection (with a complete hint: the
  // selection and t are within one listed action).
  function selectable(t, picked, ch) {
    if (!ch || !ch.cardActions.length) return false;
    if (!ch.hint.complete) return ch.size === null || picked.length < ch.size;
    const want = picked.concat([t]);
    return ch.cardActions.some((a) => within(want, a.cards));
  }

  function sendable(picked, ch) {
    if (!ch || !picked.length || !ch.cardActions.length) return null;
    const exact = ch.cardActions.find((a) => sameCards(a.cards, picked));
    if (exact) return exact;
    if (ch.hint.complete) return null;
    if (ch.size !== null && picked.length !== ch.size) return null;
    return { kind: ch.cardActions[0].kind, cards: picked };
  }

  // -- drawing -----------------------------------------------------------------------------
  let pending = false;
  function soon() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }

  function render() {
    const ch = choices();
    const req = S.request;
    root.dataset.seq = String(S.seq);
    root.dataset.state = S.game.state || "";
    root.dataset.turn = ch ? "you" : "";
    root.dataset.request = req ? req.request_id : "";
    root.dataset.kind = req ? req.kind : "";
    root.dataset.pick = ch && ch.cardActions.length ? "cards" : "";
    root.dataset.dealOver = S.dealResult && (S.dealResult.deal || 0) === S.deal ? "true"
      : "false";
    renderInfo();
    renderSeats(req);
    const sorted = S.sorted = renderHand(ch);
    renderTrick();
    renderControls(ch, sorted);
    renderMessages();
    renderResult();
    renderEnd();
    renderFeed();
    tick();
  }

  function renderInfo() {
    $("info-trump").textContent = S.trump === "" ? "not yet fixed" : S.trump === "none"
      ? "no trump suit" : SUIT[S.trump] + " " + SUIT_NAME[S.trump];
    $("info-level").textContent = S.level || "-";
    $("info-dealer").textContent = S.dealer >= 0 ? seatFull(S.dealer) : "not yet";
    const lv = S.levels;
    $("info-levels").textContent = lv ? "team 0 at " + lv[0] + ", team 1 at " + lv[1] +
      " (yours: team " + teamOf(SEAT) + ")" : "-";
    const attackers = S.dealer >= 0 ? 1 - teamOf(S.dealer) : null;
    $("info-points").textContent = String(S.attackerPoints) + (attackers === null ? ""
      : " (attackers: team " + attackers + (attackers === teamOf(SEAT) ? ", yours" : "") + ")");
    $("info-tricks").textContent = String(S.tricksPlayed);
    $("info-strikes").textContent = String(S.strikes) + (S.maxStrikes ? " of " + S.maxStrikes
      : "");
    const state = $("game-state");
    const words = { starting: "The referee is starting the bots\u2026", playing: "Playing.",
                    over: "The game is over.", failed: "The game failed" };
    let text = words[S.game.state] || S.game.state;
    if (S.game.state === "failed" && S.game.reason) text += ": " + S.game.reason + ".";
    if (S.reconnecting) text += " (connection lost: reconnecting\u2026)";
    state.textContent = text;
    state.className = "game-state state-" + S.game.state;
  }

  function renderSeats(req) {
    for (let s = 0; s < 4; s++) {
      const box = root.querySelector('.seat-box[data-seat="' + s + '"]');
      if (!box) continue;
      const badges = box.querySelector(".badges");
      badges.replaceChildren();
      if (S.dealer === s) badges.append(el("span", "badge", "dealer"));
      if (S.dealer >= 0) {
        badges.append(el("span", "badge team", teamOf(s) === teamOf(S.dealer) ? "dealer's team"
          : "attacker"));
      }
      if (S.trickLeader === s && S.trick.length) badges.append(el("span", "badge lead", "leads"));
      if (s === SEAT && req && !S.answered) badges.append(el("span", "badge you", "your turn"));
      box.classList.toggle("to-play", s === SEAT && !!req && !S.answered);
      const extra = box.querySelector(".seat-extra");
      extra.replaceChildren();
      if (s !== SEAT) extra.append(el("span", "count", S.handSizes[s] + " cards"));
      S.declarations.forEach((d, i) => {  // the last showing stands
        if (d.seat !== s) return;
        const stands = i === S.declarations.length - 1;
        const shown = el("span", "declared" + (stands ? "" : " overturned"));
        shown.append(document.createTextNode(stands ? "declared " : "overturned: "),
                     cardsEl(d.cards, "small"));
        extra.append(shown);
      });
    }
  }

  function renderHand(ch) {
    const box = $("hand");
    box.replaceChildren();
    const groups = handGroups(S.hand);
    const sorted = [];
    for (const g of groups) for (const t of g.cards) sorted.push(t);
    const picked = selectedCards(sorted);
    let i = 0;
    for (const g of groups) {
      const group = el("div", "hand-group");
      group.dataset.group = g.key;
      const row = el("div", "hand-row");
      for (const t of g.cards) {
        const idx = i++;
        const c = cardEl(t, "button");
        c.type = "button";
        c.dataset.index = String(idx);
        const on = S.selected.has(idx);
        const legal = !!ch && ch.hint.complete && ch.cardActions.some((a) => a.cards.includes(t));
        const extends_ = selectable(t, picked, ch);
        c.classList.toggle("selected", on);
        c.classList.toggle("legal", legal);
        c.classList.toggle("selectable", on || extends_ || legal);
        c.disabled = !(on || extends_ || legal);
        c.setAttribute("aria-pressed", on ? "true" : "false");
        c.addEventListener("click", () => {
          if (S.selected.has(idx)) S.selected.delete(idx);
          else if (selectable(t, selectedCards(S.sorted), choices())) S.selected.add(idx);
          else S.selected = new Set([idx]);  // a marked card of another play: start anew
          render();
        });
        row.append(c);
      }
      group.append(row, el("div", "group-label", g.label));  // (below: raised cards hide none)
      box.append(group);
    }
    if (!S.hand.length) {
      box.append(el("span", "hidden-hand", S.tricksPlayed || S.dealResult ? "no cards left"
        : "no cards yet"));
    }
    return sorted;
  }

  function renderTrick() {
    for (const p of root.querySelectorAll(".trick .play")) p.replaceChildren();
    const done = S.showLast || (!S.trick.length && S.lastTrick);
    const t = done ? S.lastTrick : { plays: S.trick, leader: S.trickLeader, winner: null };
    const trickBox = $("trick");
    trickBox.classList.toggle("showing-last", !!(done && S.showLast));
    if (t) {
      for (const p of t.plays) {
        const spot = root.querySelector('.trick .play[data-pos="' + posOf(p.seat) + '"]');
        const label = seatName(p.seat) + (p.seat === t.leader ? " led" : "") +
          (p.seat === t.winner ? ", won" : "");
        spot.append(el("span", "play-seat", label),
                    cardsEl(p.cards, t.winner === p.seat ? "winner" : ""));
      }
    }
    let note = "";
    if (done && S.lastTrick) {
      const lt = S.lastTrick;
      note = (S.showLast ? "The last trick (" : "Trick ") + lt.number + (S.showLast ? ")" : "") +
        ": " + seatName(lt.winner) + " won it" + (lt.points ? ", " + lt.points + " points" : "") +
        ".";
    } else if (S.trick.length) {
      note = "Trick " + (S.tricksPlayed + 1) + ": " + seatName(S.trickLeader) +
        (S.trickLeader === SEAT ? " lead." : " leads.");
    } else if (S.request && S.request.kind === "DECISION_KIND_LEAD") {
      note = "Trick " + (S.tricksPlayed + 1) + ": your lead.";
    }
    $("trick-note").textContent = note;
    const last = $("last-trick");
    last.disabled = !S.lastTrick;
    last.textContent = S.showLast ? "Back to the current trick" : "Show the last trick";
    last.setAttribute("aria-pressed", S.showLast ? "true" : "false");
  }

  function prompt(req, ch) {
    if (!req) {
      if (S.game.state === "over" || S.game.state === "failed" || S.matchEnd) return "";
      return S.game.state === "starting" ? "Waiting for the referee to start the match\u2026"
        : "Waiting for the other players\u2026";
    }
    if (S.answered) return "Sent: waiting for the referee\u2026";
    const lead = S.trick.length ? seatName(S.trick[0].seat) : "";
    switch (req.kind) {
      case "DECISION_KIND_DECLARE":
        return "The cards are being dealt: declare the trump with one of these, or pass.";
      case "DECISION_KIND_REDEAL": return "Your hand is short of points: demand a redeal, or pass.";
      case "DECISION_KIND_BURY":
        return "You hold the kitty: choose " + (ch && ch.size ? ch.size : "the") +
          " cards to bury.";
      case "DECISION_KIND_LEAD":
        return ch && ch.hint.complete ? "Your lead: choose the marked cards of one play."
          : "Your lead: a single, a pair, a tractor, or several cards of one suit (a throw).";
      case "DECISION_KIND_FOLLOW":
        return "Follow " + (lead === "you" ? "your" : lead + "'s") + " lead" +
          (S.trick.length ? " of " + S.trick[0].cards.length + " card" +
            (S.trick[0].cards.length > 1 ? "s" : "") : "") + ": choose from the marked cards.";
      default: return "Your decision (" + req.kind.replace("DECISION_KIND_", "").toLowerCase() +
        ").";
    }
  }

  function renderControls(ch, sorted) {
    const req = S.request;
    $("prompt").textContent = prompt(req, ch);
    const note = $("hint-note");
    note.hidden = !(ch && ch.hint.note);
    note.textContent = ch && ch.hint.note ? ch.hint.note : "";
    const actions = $("actions");
    actions.replaceChildren();
    if (ch) {
      for (const a of ch.buttons) {
        const b = el("button", "action", actionWords(a));
        b.type = "button";
        b.dataset.kind = a.kind;
        b.dataset.cards = (a.cards || []).join(" ");
        b.addEventListener("click", () => answer(a));
        actions.append(b);
      }
    }
    const picked = selectedCards(sorted);
    const action = sendable(picked, ch);
    const send = $("play-send");
    const ended = S.game.state === "over" || S.game.state === "failed";
    send.hidden = ended || (!!ch && !ch.cardActions.length);
    $("play-clear").hidden = send.hidden;
    send.disabled = !action;
    const verb = req && req.kind === "DECISION_KIND_BURY" ? "Bury" : req &&
      req.kind === "DECISION_KIND_LEAD" ? "Lead" : req && req.kind === "DECISION_KIND_FOLLOW"
      ? "Follow" : "Play";
    send.textContent = picked.length ? verb + " " + picked.join(" ") : verb;
    $("play-clear").disabled = !picked.length || !ch;
  }

  function renderMessages() {
    const box = $("messages");
    box.replaceChildren();
    for (const m of S.messages) box.append(el("p", "msg " + m.cls, m.text));
  }

  function rankGain(before, after) {
    const d = RANKS.indexOf(after) - RANKS.indexOf(before);
    return d > 0 ? " (up " + d + ")" : d < 0 ? " (down " + -d + ")" : "";
  }

  function renderResult() {
    const box = $("deal-result");
    const r = S.dealResult;
    box.hidden = !r;
    box.replaceChildren();
    if (!r) return;
    const attackers = S.dealer >= 0 ? 1 - teamOf(S.dealer) : null;
    box.append(el("h3", null, "Deal " + ((r.deal || 0) + 1) + " result"));
    const who = attackers === null ? "The attackers" : "The attackers (team " + attackers +
      (attackers === teamOf(SEAT) ? ": your team" : "") + ")";
    box.append(el("p", "deal-points", who + " took " + r.attacker_points + " points in tricks" +
      (r.kitty_bonus ? " and " + r.kitty_bonus + " from the kitty" : "") +
      (r.penalties && (r.penalties[0] || r.penalties[1]) ? ", penalties " +
        r.penalties.join(" / ") : "") + ": " + r.attacker_total + " in all."));
    if (r.levels) {
      const b = S.levelsBefore || r.levels;
      box.append(el("p", "deal-levels", "Levels after the deal: team 0 at " + r.levels[0] +
        rankGain(b[0], r.levels[0]) + ", team 1 at " + r.levels[1] +
        rankGain(b[1], r.levels[1]) +
        "; your team is team " + teamOf(SEAT) + "."));
    }
    if (typeof r.next_dealer === "number") {
      box.append(el("p", null, "Next dealer: " + seatName(r.next_dealer) + "."));
    }
    if (r.kitty && r.kitty.length) {
      const k = el("p", "deal-kitty", "The kitty was ");
      k.append(cardsEl(r.kitty, "small"));
      box.append(k);
    }
  }

  function safePath(u) {
    return typeof u === "string" && u.startsWith("/") && !u.startsWith("//") ? u : null;
  }

  function renderEnd() {
    const box = $("game-end");
    const over = S.game.state === "over" || S.game.state === "failed";
    if (!over && !S.matchEnd) { box.hidden = true; return; }
    box.hidden = false;
    let text = "";
    if (S.matchEnd) {
      const res = S.matchEnd.result || {};
      const win = res.winner_team;
      text = "The match is over (" + S.matchEnd.reason + ")" + (win === null || win ===
        undefined ? "." : ": team " + win + (win === teamOf(SEAT) ? " (yours)" : "") +
        " wins.");
      if (res.levels) {
        text += " Levels: team 0 at " + res.levels[0] + ", team 1 at " + res.levels[1] + ".";
      }
    }
    if (S.game.state === "failed") {
      text += " The game failed" + (S.game.reason ? ": " + S.game.reason : "") + ".";
    }
    if (text) $("game-end-text").textContent = text.trim();
    for (const [id, url] of [["replay-link", S.game.replay_url],
                             ["record-link", S.game.record_url]]) {
      const a = $(id);
      const path = S.game.state === "over" ? safePath(url) : null;
      if (path) { a.setAttribute("href", path); a.hidden = false; }
      else if (!a.getAttribute("href")) a.hidden = true;
    }
  }

  function renderFeed() {
    const box = $("feed");
    if (box.childElementCount === S.feed.length &&
        box.lastElementChild?.textContent === S.feed[S.feed.length - 1]) return;
    box.replaceChildren(...S.feed.map((t) => el("li", null, t)));
    box.scrollTop = box.scrollHeight;
  }

  // The clock of the open request: its allowance, then the time bank.
  function tick() {
    const clock = $("clock");
    const req = S.request;
    if (!req || S.answered) {
      clock.textContent = "-";
      clock.className = "";
      return;
    }
    const spent = performance.now() - S.receivedAt;
    const allowance = Number(req.time_left_ms) || 0;
    const bank = Number(req.bank_left_ms) || 0;
    const left = allowance - spent;
    const secs = (ms) => (Math.max(0, ms) / 1000).toFixed(1) + " s";
    if (left > 0) {
      clock.textContent = secs(left) + (bank ? " (then your bank: " + secs(bank) + ")" : "");
    } else if (bank + left > 0) {
      clock.textContent = "bank: " + secs(bank + left);
    } else {
      clock.textContent = "time is up";
    }
    clock.className = left < 5000 ? "low" : "";
  }
  setInterval(tick, 200);

  $("play-clear").addEventListener("click", () => { S.selected = new Set(); render(); });
  $("last-trick").addEventListener("click", () => {
    S.showLast = !S.showLast && !!S.lastTrick;
    render();
  });

  $("play-send").addEventListener("click", () => {
    const a = sendable(selectedCards(S.sorted), choices());
    if (a) answer(a);
  });

  render();
  connect();  // from the first message, a finished game's too (to draw its end)
})();
