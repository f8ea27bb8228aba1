// exactly: every stack's coins (tokens per value) and total, the centre, trophies, the round,
// whose turn and the rolled face, and hints of the moves that make a stack exactly €1. The
// controller takes the roll by face buttons (and the start roll), then offers each legal move
// (detail.legal_moves) as one tap.
"use strict";
(function () {
  const {el, tr} = window.C;
  const FACES = ["0", "?", "50", "20", "10", "5"];
  const VALUES = ["50", "20", "10", "5"];
  const CENTER = "center";
  const stackName = (s) => (s === CENTER ? tr("center") : s);
  const cents = (n) => (n === undefined || n === null ? "–" : n + "c");

  function coin(value, n) {
    return el("span", {class: "coin coin-" + value, "data-coin": value}, (n > 1 ? n + "×" : "") + value);
  }

  function coins(stack) {
    const box = el("div", {class: "coins"});
    for (const v of VALUES) {
      const n = (stack.tokens || {})[v] || 0;
      if (n) box.appendChild(coin(v, n));
    }
    if (!box.children.length) box.appendChild(el("span", {class: "dim"}, "–"));
    return box;
  }

  // What a move does to the two stacks it touches: the totals after it, exact hits.
  function effect(state, move) {
    const stacks = state.detail.stacks;
    const from = stacks[move.from].total - move.value;
    const to = stacks[move.to].total + move.value;
    const exact = [];
    if (move.from !== CENTER && from === 100) exact.push(move.from);
    if (move.to !== CENTER && to === 100) exact.push(move.to);
    return {from, to, exact};
  }

  function faceChip(face) { return el("span", {class: "face", "data-face": face}, face === "?" ? "?" : face); }

  function turnCard(state) {
    const d = state.detail;
    const card = el("div", {class: "card x-turn"},
      el("div", {class: "dim"}, tr("x_round", {n: d.round}), " · ", tr("x_to_win", {n: d.options.target}),
        " · ", tr("x_trophies_left", {n: d.trophies_left})));
    if (state.finished) return card;
    if (d.phase === "move") {
      card.appendChild(el("div", {class: "x-now"}, tr("x_rolled", {name: d.active}), " ", faceChip(d.face)));
      const moves = d.legal_moves || [];
      const exact = moves.filter((m) => effect(state, m).exact.length);
      const hint = el("div", {class: "x-hints"}, tr("x_moves", {n: moves.length}), " · ");
      if (exact.length) {
        hint.appendChild(el("b", {}, tr("x_hint_exact")));
        const list = el("div", {class: "x-hint-list"});
        for (const m of exact.slice(0, 6)) {  // a long name cut with "…", the whole move in the title
          const text = m.value + "c " + stackName(m.from) + " → " + stackName(m.to);
          list.appendChild(el("span", {class: "x-hint", "data-hint": "exact", title: text}, text));
        }
        if (exact.length > 6) list.appendChild(el("span", {class: "dim"}, "+" + (exact.length - 6)));
        hint.appendChild(list);
      } else hint.appendChild(el("span", {class: "dim"}, tr("x_no_exact")));
      card.appendChild(hint);
    } else card.appendChild(el("div", {class: "x-now"}, tr("x_rolls", {name: d.active})));
    return card;
  }

  function lastLine(state) {
    const last = state.detail.last;
    if (!last) return null;
    let text = null;
    if (last.type === "roll" && last.auto_pass === "zero") text = tr("x_last_zero", {name: last.player});
    else if (last.type === "roll" && last.auto_pass) text = tr("x_last_no_move", {name: last.player, face: last.face});
    else if (last.type === "move") {
      text = tr("x_last_move", {name: last.player, value: last.value, from: stackName(last.from), to: stackName(last.to)});
      if ((last.round_won || []).length) text += " · " + tr("x_round_won", {names: C.names(last.round_won)});
    } else if (last.type === "start_roll") text = tr("x_last_start", {name: last.next});
    return text ? el("div", {class: "last", "data-last": last.type}, text) : null;
  }

  C.scoreboards.exactly = function (state, root) {
    const d = state.detail || {};
    root.appendChild(turnCard(state));
    const last = lastLine(state);
    if (last) root.appendChild(last);
    const grid = el("div", {class: "stacks"});
    const stacks = d.stacks || {};
    for (const p of [...(state.players || []), CENTER]) {
      const s = stacks[p] || {};
      const isCenter = p === CENTER;
      const trophies = isCenter ? null : (state.scores || {})[p] || 0;
      const onTurn = !state.finished && (state.to_act || []).includes(p);
      grid.appendChild(el("div", {class: "stack" + (onTurn ? " on-turn" : "") + (isCenter ? " center" : "")
        + (s.total === 100 ? " at100" : "") + (!isCenter && s.total > 150 ? " closed" : "")
        + ((state.winners || []).includes(p) ? " won" : ""), "data-stack": p},
        el("div", {class: "name", title: stackName(p)}, stackName(p)),
        el("div", {class: "cents"}, cents(s.total)),
        !isCenter && s.total > 150 ? el("div", {class: "x-closed"}, tr("x_over")) : null,
        coins(s),
        trophies === null ? null : el("div", {class: "trophies", title: tr("trophies"), "data-trophies": trophies},
          "★".repeat(trophies) || "☆")));
    }
    root.appendChild(grid);
  };

  // -- controller

  let valueTab = null;   // the value shown when the face is "?"
  let fromTab = null;    // the stack whose moves are shown when there are too many for the dock
  const startFaces = {};  // player -> face, kept across re-renders
  let startOpen = true;   // the start roll's box, as the player left it

  function rollButtons(state) {
    const player = state.detail.active;
    const box = el("div", {class: "card"}, el("div", {class: "who"}, tr("x_rolls", {name: player})));
    const grid = el("div", {class: "faces"});
    for (const f of FACES) grid.appendChild(el("button", {type: "button", class: "face-btn", "data-face": f,
      onclick: () => C.send({type: "roll", player, face: f})}, f, el("small", {}, tr(f === "?" ? "x_any" : f === "0" ? "x_pass" : "x_token"))));
    box.appendChild(grid);
    return box;
  }

  function startRoll(state) {
    const form = el("form", {class: "card x-start"}, el("div", {class: "who"}, tr("x_start")));
    for (const p of state.players) {
      const opts = el("div", {class: "opts"});
      for (const f of FACES) {
        const b = el("button", {type: "button", "data-player": p, "data-face": f,
          "aria-pressed": startFaces[p] === f ? "true" : "false"}, f);
        b.addEventListener("click", () => {
          startFaces[p] = f;
          for (const o of opts.children) o.setAttribute("aria-pressed", o === b ? "true" : "false");
        });
        opts.appendChild(b);
      }
      form.appendChild(el("div", {class: "picker"}, el("div", {class: "lab"}, p), opts));
    }
    form.appendChild(el("button", {type: "submit", class: "primary big"}, tr("x_start_send")));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await C.send({type: "start_roll", faces: Object.assign({}, startFaces)});
      if (r.ok) for (const k of Object.keys(startFaces)) delete startFaces[k];
    });
    // Open: before the first roll, rolling for who starts is what a table does first; a table
    // that just lets the first seat start closes it, or simply rolls.
    const box = el("details", {class: "x-start-box"}, el("summary", {}, tr("x_start")), form);
    box.open = startOpen;
    box.addEventListener("toggle", () => { startOpen = box.open; });
    return box;
  }

  // A stack's name on a move button: on one line, cut with "…" when wider than the button (a
  // 40-letter one-word name), whole in its title.
  const nameChip = (s) => el("span", {class: "nm", title: stackName(s)}, stackName(s));

  // ``to`` alone: the stack the move comes from is the tab chosen above the moves
  function moveButton(state, move, toOnly) {
    const e = effect(state, move);
    const touched = [[move.from, e.from], [move.to, e.to]].filter(([s]) => s !== CENTER);
    const sub = touched.map(([s, n]) => stackName(s) + " " + n + "c").join(" · ");
    const exact = e.exact.length ? " ★ " + tr("x_to_exact") : "";
    const path = (toOnly ? "" : stackName(move.from) + " ") + "→ " + stackName(move.to);
    return el("button", {type: "button", class: "move" + (e.exact.length ? " exact" : ""),
      "data-move": `${move.value}:${move.from}:${move.to}`, title: `${move.value}c ${path}` + (sub ? " · " + sub : "") + exact,
      onclick: () => C.send(move)},
      el("span", {class: "coin coin-" + move.value}, move.value),
      el("span", {class: "path"}, toOnly ? null : nameChip(move.from), el("span", {}, "→"), nameChip(move.to)),
      el("small", {}, ...touched.flatMap(([s, n], i) => [i ? el("span", {}, "·") : null,
        el("span", {class: "part"}, nameChip(s), el("span", {}, n + "c"))]),
        e.exact.length ? el("span", {}, "★ " + tr("x_to_exact")) : null));
  }

  function moveList(state) {
    const d = state.detail;
    const moves = d.legal_moves || [];
    const box = el("div", {class: "card"}, el("div", {class: "who"}, tr("x_rolled", {name: d.active}), " ", faceChip(d.face)));
    let shown = moves;
    if (d.face === "?") {
      const values = VALUES.filter((v) => moves.some((m) => String(m.value) === v));
      if (!values.includes(valueTab)) valueTab = values[0];
      const tabs = el("div", {class: "faces tabs"});
      for (const v of values) tabs.appendChild(el("button", {type: "button", "data-tab": v,
        "aria-pressed": v === valueTab ? "true" : "false",
        onclick: () => { valueTab = v; C.render(state); }}, v + "c"));
      box.appendChild(tabs);
      shown = moves.filter((m) => String(m.value) === valueTab);
    }
    // More moves than three rows of three (four or more players: every stack that holds the
    // token, to every other): a tab per stack they come from, the moves of one at a time, so the
    // dock never grows past the screen. A stack with a move to exactly €1 is shown first.
    const tabbed = shown.length > 9;
    if (tabbed) {
      const froms = [...new Set(shown.map((m) => m.from))];
      if (!froms.includes(fromTab)) fromTab = froms.find((f) => shown.some((m) => m.from === f && effect(state, m).exact.length)) || froms[0];
      const tabs = el("div", {class: "faces tabs from", role: "group", "aria-label": tr("x_from")});
      for (const f of froms) tabs.appendChild(el("button", {type: "button", "data-from-tab": f, title: stackName(f),
        "aria-pressed": f === fromTab ? "true" : "false",
        onclick: () => { fromTab = f; C.render(state); }}, stackName(f) + " →"));
      box.appendChild(tabs);
      shown = shown.filter((m) => m.from === fromTab);
    }
    const exactFirst = [...shown].sort((a, b) => effect(state, b).exact.length - effect(state, a).exact.length);
    const grid = el("div", {class: "moves"});
    for (const m of exactFirst) grid.appendChild(moveButton(state, m, tabbed));
    box.appendChild(grid);
    return box;
  }

  C.controllers.exactly = function (state, root) {
    if (state.finished) return;
    const d = state.detail || {};
    // the roll's faces and the moves sit in the dock, under the thumb; the start roll (once a
    // game) stays in the page
    if (d.phase === "move") { root.appendChild(C.dock(moveList(state))); return; }
    if ((state.legal || []).some((a) => a.type === "start_roll")) root.appendChild(startRoll(state));
    root.appendChild(C.dock(rollButtons(state)));
  };
})();
