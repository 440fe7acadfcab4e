// The replay viewer: walks the steps the server sent for one view and draws the table after
// each. It hides nothing itself: what a view may see is decided by the server.
(function () {
  "use strict";
  const root = document.getElementById("replay");
  if (!root) return;
  const matchId = root.dataset.match;
  const SUIT = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const POS = ["south", "east", "north", "west"];
  let data = null;
  let at = 0;
  let seat = root.dataset.seat === "" ? null : Number(root.dataset.seat);

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function cardEl(text) {
    const c = el("span", "card");
    c.dataset.card = text;
    c.title = text;
    if (text === "BJ" || text === "LJ") {
      c.classList.add("joker", text === "BJ" ? "red" : "black");
      c.append(el("span", "rank", text === "BJ" ? "BIG" : "LITTLE"), el("span", "suit", "\u2605"),
               el("span", "joker-word", "JOKER"));
      return c;
    }
    const suit = text.slice(-1);
    c.classList.add(suit === "H" || suit === "D" ? "red" : "black");
    c.append(el("span", "rank", text.slice(0, -1)), el("span", "suit", SUIT[suit] || suit));
    return c;
  }

  function cards(list, cls) {
    const box = el("span", "cards" + (cls ? " " + cls : ""));
    for (const t of list) box.append(cardEl(t));
    return box;
  }

  // The seat drawn at the bottom: the viewer's own, else seat 0.
  function posOf(s) {
    return POS[(s - (seat === null ? 0 : seat) + 4) % 4];
  }

  function seatLabel(s) {
    const name = data.seats[s];
    return "seat " + s + (name ? " (" + name + ")" : "");
  }

  function render() {
    const steps = data.steps;
    const step = steps[at];
    const st = step.state;
    $("step-no").textContent = String(at + 1);
    $("step-count").textContent = String(steps.length);
    $("step-title").textContent = step.title;
    root.dataset.step = String(at + 1);
    root.dataset.kind = step.kind;
    root.dataset.last = at === steps.length - 1 ? "true" : "false";

    const info = $("replay-info");
    info.replaceChildren();
    const trump = st.trump === null ? "not yet" : st.trump === "none" ? "no trump suit"
      : SUIT[st.trump] + " " + st.trump;
    const levels = st.levels ? "team 0 at " + st.levels[0] + ", team 1 at " + st.levels[1] : "-";
    const att = st.attackers === null ? "" : " (attackers: team " + st.attackers + ")";
    for (const [k, v] of [["view", data.view], ["game", String(st.game + 1)],
        ["dealer", st.dealer === null ? "not yet" : seatLabel(st.dealer)], ["trump", trump],
        ["levels", levels], ["points", "team 0: " + st.points[0] + ", team 1: " + st.points[1] + att]]) {
      const item = el("span", "info-item " + k);
      item.append(el("b", null, k + " "), document.createTextNode(v));
      info.append(item);
    }

    for (let s = 0; s < 4; s++) {
      const box = root.querySelector('.seat-box[data-pos="' + posOf(s) + '"]');
      box.dataset.seat = String(s);
      const name = box.querySelector(".seat-name");
      name.textContent = seatLabel(s) + ", team " + (s % 2);
      if (st.dealer === s) name.append(el("span", "badge", "dealer"));
      if (seat === s) name.append(el("span", "badge you", "this view"));
      const hand = box.querySelector(".hand");
      hand.replaceChildren();
      const h = st.hands[s];
      if (h === null) hand.append(el("span", "hidden-hand", "hand not shown in this view"));
      else if (h.length === 0) hand.append(el("span", "hidden-hand", "no cards"));
      else hand.append(cards(h));
    }

    for (const p of root.querySelectorAll(".trick .play")) p.replaceChildren();
    const t = st.trick;
    const showTrick = step.kind === "trick" || step.kind === "result";
    if (showTrick) {
      for (const p of t.plays) {
        const spot = root.querySelector('.trick .play[data-pos="' + posOf(p.seat) + '"]');
        spot.append(el("span", "play-seat", "seat " + p.seat + (p.lead ? " leads" : "")),
                    cards(p.cards, t.winner === p.seat ? "winner" : ""));
      }
    }
    $("trick-note").textContent = showTrick && t.number
      ? "trick " + t.number + (t.winner === null ? "" : ": seat " + t.winner + " wins " + t.points + " point(s)")
      : "";

    const kitty = $("kitty");
    kitty.replaceChildren();
    const k = st.kitty;
    kitty.append(el("p", "kitty-state", k.state + (k.holder === null ? "" : " (seat " + k.holder + ")")));
    if (k.cards) kitty.append(cards(k.cards));

    const decl = $("declarations");
    decl.replaceChildren();
    if (!st.declarations.length) decl.append(el("p", "muted", "none yet"));
    for (const d of st.declarations) {
      const row = el("p", "declaration");
      row.append(document.createTextNode("seat " + d.seat + (d.overturn ? " overturns " : " declares ")),
                 cards(d.cards));
      decl.append(row);
    }

    const res = $("result");
    if (st.result) {
      const r = st.result;
      res.hidden = false;
      res.replaceChildren(el("h3", null, "Deal result"),
        el("p", null, "attackers took " + r.attacker_points + " points, kitty bonus " + r.kitty_bonus +
           ", penalties " + r.penalties.join(" / ") + ": total " + r.attacker_total),
        el("p", null, "levels after the deal: team 0 at " + r.levels[0] + ", team 1 at " + r.levels[1] +
           "; next dealer seat " + r.next_dealer));
    } else {
      res.hidden = true;
      res.replaceChildren();
    }
  }

  function go(i) {
    if (!data || !data.steps.length) return;
    at = Math.max(0, Math.min(data.steps.length - 1, i));
    render();
  }

  async function load(view) {
    seat = view;
    root.dataset.ready = "false";
    const base = root.dataset.steps ||
      "/api/matches/" + encodeURIComponent(matchId) + "/replay";
    const url = base + (view === null ? "" : "?seat=" + view);
    const err = $("replay-error");
    try {
      const r = await fetch(url, { headers: { Accept: "application/json" } });
      const body = await r.json();
      if (!r.ok) throw new Error(body.detail || ("HTTP " + r.status));
      data = body;
      err.hidden = true;
    } catch (e) {
      err.textContent = "The steps could not be loaded: " + e.message;
      err.hidden = false;
      return;
    }
    root.dataset.view = data.view;
    const page = new URL(window.location.href);
    if (view === null) page.searchParams.delete("seat");
    else page.searchParams.set("seat", String(view));
    window.history.replaceState(null, "", page);
    go(0);
    root.dataset.ready = "true";
  }

  $("replay-first").addEventListener("click", () => go(0));
  $("replay-prev").addEventListener("click", () => go(at - 1));
  $("replay-next").addEventListener("click", () => go(at + 1));
  $("replay-last").addEventListener("click", () => go(Infinity));
  $("replay-view").addEventListener("change", (e) => {
    const v = e.target.value;
    load(v === "" ? null : Number(v));
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement || e.target instanceof HTMLInputElement) return;
    const move = { ArrowLeft: () => go(at - 1), ArrowRight: () => go(at + 1),
                   Home: () => go(0), End: () => go(Infinity) }[e.key];
    if (move) { e.preventDefault(); move(); }
  });
  load(seat);
})();
