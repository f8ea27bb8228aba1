// Shared by every page: texts, DOM helper, API calls with the PIN, the live stream.
"use strict";
(function () {
  const C = window.COMPANION || {t: {}};
  window.C = C;
  C.scoreboards = {};   // game -> function(state, root): one small renderer per game (static/games/*.js)
  C.controllers = {};   // game -> function(state, root): entry by taps for that game

  C.tr = function (key, vars) {
    let s = C.t[key] !== undefined ? C.t[key] : key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
    return s;
  };

  // el("div", {class: "x", onclick: f}, child, "text", ...)
  C.el = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return node;
  };
  C.svg = function (tag, attrs) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  };

  // The controller's dock: a game's main in-play actions, fixed above the thumb bar (app.css).
  C.dock = (...children) => C.el("div", {class: "dock", id: "dock"}, ...children);

  C.gameName = (g) => C.t["game_" + g] || g;
  // A Stack 21 team by its members ("Ann + Cy"): its key "Ann+Cy" is one unbreakable word.
  C.unitName = (state, unit) => {
    const teams = state.detail && state.detail.teams;
    return teams && teams[unit] ? teams[unit].join(" + ") : unit;
  };
  C.names = (list) => (list || []).join(", ");

  let toastTimer = null;
  C.toast = function (message, ok) {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = "toast" + (ok ? " ok" : "");
    box.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { box.hidden = true; }, ok ? 1800 : 5000);
  };

  C.storedPin = () => { try { return localStorage.getItem("companion.pin") || ""; } catch (e) { return ""; } };
  C.storePin = (pin) => { try { localStorage.setItem("companion.pin", pin); } catch (e) { /* private mode */ } };

  // fetch JSON; returns {ok, status, data}. Changes carry the PIN header when we have one, and
  // the rev of the state this page last showed: if the table has moved on since (a second tap,
  // another phone), the server does nothing and answers STALE.
  // A queued tap sends the rev it was made on (``rev``), not the one shown now.
  C.api = async function (method, path, body, rev) {
    const headers = {"Accept": "application/json"};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const pin = C.storedPin() || C.pin;
    if (pin && method !== "GET") headers["X-Table-Pin"] = pin;
    const made = rev === undefined ? C.rev : rev;
    if (made && method !== "GET") headers["X-Table-Rev"] = made;
    let response;
    try {
      response = await fetch(path, {method, headers, credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body)});
    } catch (e) {
      return {ok: false, status: 0, data: {code: "OFFLINE", message: C.tr("offline")}};
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = {code: "BAD_RESPONSE", message: response.statusText}; }
    if (!response.ok && (data.code === "BAD_PIN" || data.code === "PIN_REQUIRED") && C.onPinNeeded) C.onPinNeeded();
    return {ok: response.ok, status: response.status, data};
  };

  // A refusal as a sentence in the page's language, chosen by its code: the page's own codes
  // (PIN, STALE) always from the catalogue; the rules' and the server's codes from the catalogue
  // too ("rule_" + code), except on an English page, where the server's sentence is already in
  // the page's language and names the players and values.
  // Only a code the catalogue does not know falls back to the server's sentence.
  // A refusal whose sentence names players or values carries them as ``args``; the catalogue
  // says it with them by the code and the names of its args ("rule_NOT_YOUR_TURN@player":
  // "{player} következik"), a cup, a colour or the centre in the page's words.
  C.refusal = function (data) {
    data = data || {};
    const own = C.t["code_" + data.code], rule = C.t["rule_" + data.code];
    if (own !== undefined) return own;
    const args = data.args && typeof data.args === "object" && !Array.isArray(data.args) ? data.args : null;
    const told = args ? "rule_" + data.code + "@" + Object.keys(args).sort().join(",") : null;
    if (told && C.t[told] !== undefined && (C.lang !== "en" || !data.message)) return C.tr(told, argWords(args));
    if (rule !== undefined && (C.lang !== "en" || !data.message)) return rule;
    return data.message || data.code || "";
  };
  function argWords(args) {
    const words = {};
    for (const [k, v] of Object.entries(args)) {
      if (Array.isArray(v)) words[k] = C.names(v);
      else if (k === "cup" && C.t["cup_" + v] !== undefined) words[k] = C.t["cup_" + v];
      else if (k === "colour" && C.t["colour_" + v] !== undefined) words[k] = C.t["colour_" + v];
      else if (v === "center" && C.t.center !== undefined) words[k] = C.t.center;
      else words[k] = String(v);
    }
    return words;
  }

  // Send a change; a refusal is explained in the toast (the engine's own sentence).
  // On the controller (C.queueing) an event or an undo that cannot reach the table (the server
  // restarts, the Wi-Fi drops) is not lost: it waits in a queue, kept in localStorage so a reload
  // keeps it too, and is sent once, in order, when the table answers again. Each goes with the
  // rev it was made on: a tap the table already stored (its answer was lost) or one the game has
  // moved past is STALE, shown as refused and dropped; never applied twice.
  C.change = async function (method, path, body) {
    const queueable = C.queueing && method === "POST" && QUEUEABLE.includes(path);
    if (queueable && C.queue.length) {  // behind taps still waiting: in their order
      enqueue(method, path, body);
      C.flushQueue();
      return {ok: false, status: 0, queued: true, data: {code: "QUEUED"}};
    }
    const rev = C.rev;
    const r = await C.api(method, path, body);
    if (queueable && r.status === 0) {
      enqueue(method, path, body, rev);
      return Object.assign(r, {queued: true});
    }
    if (!r.ok) C.toast(C.tr("error") + ": " + C.refusal(r.data));
    else C.clearError();
    if (r.ok && r.data && r.data.game !== undefined && C.render) C.render(r.data, true);
    return r;
  };

  // -- the queue of taps waiting for the table ----------------------------------------------
  const QUEUEABLE = ["/api/events", "/api/undo"];
  const QUEUE_KEY = "companion.queue";
  C.queue = (() => {
    try { const q = JSON.parse(localStorage.getItem(QUEUE_KEY) || "[]"); return Array.isArray(q) ? q : []; }
    catch (e) { return []; }
  })();
  let retryTimer = null;
  function saveQueue() {
    try {
      if (C.queue.length) localStorage.setItem(QUEUE_KEY, JSON.stringify(C.queue));
      else localStorage.removeItem(QUEUE_KEY);
    } catch (e) { /* private mode: the queue lives as long as the page */ }
    if (C.queue.length && !retryTimer) retryTimer = setInterval(() => C.flushQueue(), C.queueRetryMs || 2000);
    if (!C.queue.length && retryTimer) { clearInterval(retryTimer); retryTimer = null; }
    C.showQueue();
  }
  function enqueue(method, path, body, rev) {
    C.queue.push({method, path, body, rev: rev === undefined ? (C.rev || null) : (rev || null)});
    saveQueue();
  }
  let flushing = false;
  C.flushQueue = async function () {
    if (flushing || !C.queue.length) return;
    flushing = true;
    try {
      while (C.queue.length) {
        const item = C.queue[0];
        const r = await C.api(item.method, item.path, item.body, item.rev);
        if (r.status === 0) break;  // still away: kept, tried again in a moment
        C.queue.shift();
        saveQueue();
        if (r.ok) {
          C.clearError();
          if (r.data && r.data.game !== undefined && C.render) C.render(r.data, true);
        } else C.toast(C.tr("error") + ": " + C.refusal(r.data));
      }
    } finally { flushing = false; }
  };
  // The box that says which taps are waiting (the controller's #queued).
  C.showQueue = function () {
    const box = document.getElementById("queued");
    if (!box) return;
    box.hidden = !C.queue.length;
    box.replaceChildren(...(C.queue.length ? [C.el("p", {class: "what"}, C.tr("queue_waiting", {n: C.queue.length})),
      C.el("ol", {}, C.queue.map((q) => C.el("li", {}, q.path === "/api/undo" ? C.tr("undo") : C.valuesText(q.body))))] : []));
  };
  C.startQueue = function () {
    C.queueing = true;
    saveQueue();
    C.flushQueue();
  };
  // A refusal stays on screen only until the next change goes through.
  C.clearError = function () {
    const box = document.getElementById("toast");
    if (box && !box.hidden && !box.classList.contains("ok")) box.hidden = true;
  };
  C.send = (event) => C.change("POST", "/api/events", Object.assign({source: "phone"}, event));

  // The banner of alerts every page shows (the table log's troubles); the stream keeps the
  // table's own up to date, the camera's stay as the page was served.
  C.alertText = function (a) {
    const own = a.state ? "alert_" + a.code + "_" + a.state : null;  // a state's own sentence first
    if (own && C.t[own] !== undefined) return C.tr(own, a);
    return C.t["alert_" + a.code] !== undefined ? C.tr("alert_" + a.code, a) : (a.message || a.code);
  };
  C.showAlerts = function (list) {
    const box = document.getElementById("alerts");
    if (!box || !Array.isArray(list)) return;
    for (const p of Array.from(box.querySelectorAll('[data-from="table"]'))) p.remove();
    for (const a of list) box.appendChild(C.el("p", {class: "alert", "data-code": a.code, "data-from": "table"}, C.alertText(a)));
  };

  // The live stream: full state on connect, then every change. EventSource reconnects by itself.
  C.connect = function (onState) {
    const conn = document.getElementById("conn");
    let version = -1;
    // The stream is in order; a POST's answer may arrive after a newer streamed state and is
    // then skipped. (After a server restart versions start again from 0: the stream still wins.)
    C.render = function (state, answer) {
      if (answer && state.version !== undefined && state.version <= version) return;
      version = state.version === undefined ? version : state.version;
      if (state.rev !== undefined) C.rev = state.rev;
      C.game = state.game;
      const title = document.getElementById("title");
      if (title) title.textContent = state.game ? C.gameName(state.game) : C.tr("no_game");
      document.body.dataset.version = String(state.version);
      if (state.alerts) C.showAlerts(state.alerts);
      onState(state);
    };
    // A refused stream (503: every stream slot taken) closes the EventSource for good. The page
    // then reads /api/state every few seconds, says it is not live, and tries the stream again
    // a few seconds later; other errors EventSource retries by itself.
    const notLive = document.getElementById("notlive");
    let pollTimer = null;
    // The table cannot be reached (the server restarts, the Wi-Fi drops): said in words after a
    // moment, not only by the red dot; gone once the stream or a read answers again.
    const offline = document.getElementById("offline");
    let awayTimer = null;
    function away(off) {
      clearTimeout(awayTimer);
      if (!offline) return;
      if (!off) { offline.hidden = true; return; }
      awayTimer = setTimeout(() => { offline.hidden = false; }, C.awayMs || 1500);
    }
    function live(on) {
      if (conn) conn.dataset.state = on ? "on" : (pollTimer ? "poll" : "off");
      if (notLive) notLive.hidden = on || !pollTimer;
    }
    async function readState() {
      const r = await C.api("GET", "/api/state");
      if (r.status === 0) away(true);
      else if (!C.source || C.source.readyState !== EventSource.CONNECTING) away(false);
      // with the stream open, a read answer older than what it sent is skipped (as a POST's)
      if (r.ok && r.data && r.data.game !== undefined) C.render(r.data, !!C.source && C.source.readyState === EventSource.OPEN);
      return r.ok;
    }
    function poll() {
      if (!pollTimer) pollTimer = setInterval(readState, C.pollMs || 3000);
      readState().then((ok) => { if (C.source && C.source.readyState !== EventSource.OPEN) {
        if (conn) conn.dataset.state = ok ? "poll" : "off";
        if (notLive) notLive.hidden = false;
      } });
    }
    function open() {
      const source = new EventSource("/api/stream");
      source.addEventListener("state", (e) => C.render(JSON.parse(e.data)));
      source.onopen = () => {
        clearInterval(pollTimer);
        pollTimer = null;
        live(true);
        away(false);
        if (C.queueing) C.flushQueue();  // the table is back: send what waited for it
      };
      source.onerror = () => {
        live(false);
        if (source.readyState === EventSource.CONNECTING) away(true);  // the stream dropped: reconnecting
        if (source.readyState === EventSource.CLOSED && C.source === source) {
          poll();
          setTimeout(open, (C.streamRetryMs || 3000) * (1 + Math.random()));
        }
      };
      C.source = source;
    }
    open();
    // the board at once, not only when the stream's first message comes (or never, if refused)
    readState();
  };

  // "A, B: to act" / "X wins!" line shared by the scoreboard and the controller.
  C.statusLine = function (state) {
    const box = C.el("div");
    if (!state.game) return box;
    if (state.finished) {
      const w = state.winners || [];
      const names = w.map((u) => C.unitName(state, u));
      const text = names.length > 1 ? C.tr("winners", {names: C.names(names)})
        : names.length ? C.tr("winner", {name: names[0]}) : C.tr("finished");
      // a 40-letter name is cut with an ellipsis, never split: the whole line is in the title
      box.appendChild(C.el("div", {class: "win nm", title: text}, text));
    } else if ((state.to_act || []).length) {
      const act = C.el("div", {class: "act"});
      act.innerHTML = "";
      act.appendChild(document.createTextNode(C.tr("to_act", {names: ""})));
      // each name whole, wrapping between names; one wider than the line ends in "…" (its title whole)
      act.appendChild(C.el("b", {}, (state.to_act || []).flatMap((n, i) => [i ? ", " : "", nameEl("span", n)])));
      box.appendChild(act);
    }
    return box;
  };

  // -- a finished game: final standings, Rematch, New game (scoreboard and controller) --------

  // A name that wraps only between words; a single word wider than the line ends in "…", and
  // the full name is in the title.
  const nameEl = (tag, name, cls) => C.el(tag, {class: "nm" + (cls ? " " + cls : ""), title: name}, name);

  // Who plays for a 21 Exact side (a Stack 21 team is named by its members already).
  function sidePlayers(state, unit) {
    const sides = (state.detail || {}).sides;
    return sides && sides[unit] ? sides[unit].players || [] : [];
  }

  // Every player (side, team) once: the winners first, then by score (every game's score is
  // "more is better"), ties in seat order and sharing a place.
  C.ranking = function (state) {
    const scores = state.scores || {}, winners = state.winners || [];
    const rows = (state.players || []).map((unit, seat) => ({unit, seat, won: winners.includes(unit),
      score: typeof scores[unit] === "number" ? scores[unit] : null}));
    const key = (r) => r.score === null ? -Infinity : r.score;
    rows.sort((a, b) => (b.won - a.won) || (key(b) - key(a)) || (a.seat - b.seat));
    rows.forEach((r, i) => {
      const before = rows[i - 1];
      r.place = before && before.won === r.won && key(before) === key(r) ? before.place : i + 1;
    });
    return rows;
  };

  C.standings = function (state) {
    const list = C.el("ol", {class: "ranks"});
    for (const r of C.ranking(state)) {
      const players = sidePlayers(state, r.unit);
      const who = C.el("div", {class: "rank-who"},
        nameEl("div", C.unitName(state, r.unit), "unit"),
        players.length ? C.el("div", {class: "rank-members"}, players.map((p) => nameEl("span", p))) : null,
        r.won ? C.el("div", {class: "rank-tag"}, C.tr("standing_winner")) : null);
      const points = r.score === null ? "–"
        : C.tr(state.game === "exactly" ? "standing_trophies" : "standing_points", {n: r.score});
      list.appendChild(C.el("li", {class: "rank" + (r.won ? " won" : ""), "data-unit": r.unit, "data-place": r.place},
        C.el("span", {class: "place"}, r.place), who,
        C.el("span", {class: "pts", "data-points": r.score === null ? "" : r.score}, points)));
    }
    return list;
  };

  // One tap: the finished game's own new_game (same game, players or sides, house rules, sheets)
  // sent again as set-up sends it. The rev of the finished game goes with it, so a second tap or
  // a second phone's Rematch is STALE, not a third game.
  C.rematch = async function (state, pin) {
    if (pin) pin.take();
    const r = await C.api("POST", "/api/games", Object.assign({}, state.new_game, {source: "phone"}));
    if (r.ok) { C.clearError(); C.toast(C.tr("rematch_started"), true); if (C.render) C.render(r.data, true); }
    else if (pin && C.pinRefused(r)) pin.ask(r);  // the field beside Rematch, with why
    else C.toast(C.tr("error") + ": " + C.refusal(r.data));
    return r;
  };

  // A PIN field beside a button that changes the game, for a page without the controller's PIN
  // form (the scoreboard's Rematch, History's Resume): shown up front when this phone has no PIN
  // (``upfront``), and with the refusal in the page's language when the PIN is missing or wrong.
  // Never a native prompt. take() keeps what was typed before the change is sent.
  let pinFields = 0;
  C.pinRefused = (r) => !r.ok && (r.data.code === "PIN_REQUIRED" || r.data.code === "BAD_PIN");
  C.pinRow = function (upfront) {
    const id = "pin-field-" + (++pinFields);
    const input = C.el("input", {id, name: "pin", inputmode: "numeric", autocomplete: "off", maxlength: "12"});
    const row = C.el("div", {class: "pin-row"}, C.el("label", {for: id}, C.tr("pin_enter")), input);
    row.hidden = !upfront || !!(C.storedPin() || C.pin);
    return {row, input,
      take() { if (!row.hidden && input.value.trim()) C.storePin(input.value.trim()); },
      ask(r) { row.hidden = false; input.focus(); C.toast(C.tr("error") + ": " + C.refusal(r.data)); }};
  };

  // The card under the headline once a game is finished; hidden while one is played.
  C.showFinal = function (state, box) {
    if (!box) return;
    box.hidden = !(state.game && state.finished);
    if (box.hidden) { box.replaceChildren(); return; }
    let busy = false;
    // the controller has its own PIN form (C.onPinNeeded); elsewhere the field sits by Rematch
    const pin = state.new_game && !C.onPinNeeded ? C.pinRow(true) : null;
    const again = state.new_game ? C.el("button", {type: "submit", class: "primary rematch"}, "↻ " + C.tr("rematch")) : null;
    const actions = C.el("form", {class: "final-actions", onsubmit: async (e) => {
      e.preventDefault();
      if (busy || !again) return;
      busy = true;
      try { await C.rematch(state, pin); } finally { busy = false; }
    }}, pin ? pin.row : null, again,
      C.el("a", {class: "button newgame", href: "/setup"}, "+ " + C.tr("new_game")));
    box.replaceChildren(C.el("div", {class: "card"},
      C.el("h2", {}, C.tr("standings")), C.standings(state), actions));
  };

  // A camera proposal (or any event a player is asked about) in the page's words, from its
  // structured fields: the side, the player (the thrower the board names, where the event has
  // none), the cup or die colours and values by the catalogue's names; never the event's English
  // type and field names. An event of a kind the catalogue does not describe is its values, in
  // the page's words where the catalogue names them (as a waiting tap is).
  C.eventText = function (event, state) {
    event = event || {};
    const d = (state && state.detail) || {};
    const word = C.valueText;
    const dice = (values) => Object.entries(values || {}).map(([c, v]) => (C.t["colour_" + c] || c) + " " + v).join(", ");
    const name = event.player || event.dealer || d.to_act_player || d.active || d.roller || (state && (state.to_act || [])[0]) || "";
    switch (event.type) {
      case "throw": {
        const cup = word(event.cup);
        const by = state && state.game === "exact21" && (state.to_act || [])[0] === event.side ? d.thrower : event.player;
        if (!by) return C.tr("prop_throw", {side: event.side, cup});
        return by === event.side ? C.tr("prop_throw_one", {name: by, cup}) : C.tr("prop_throw_by", {name: by, side: event.side, cup});
      }
      case "dice": return C.tr("prop_dice", {side: event.side, dice: dice(event.values)});
      case "roll":
        if (event.face !== undefined) return C.tr("u_rolled_face", {name, face: event.face});
        return C.tr("prop_roll", {name, dice: dice(event.dice)});
      case "reroll": return C.tr("prop_reroll", {name, dice: dice(event.dice)});
      case "start_roll": return C.tr("prop_start", {faces: Object.entries(event.faces || {}).map(([p, f]) => p + " " + f).join(", ")});
      case "draw":
        if (event.card !== undefined) return C.tr("s21_last_draw", {name, card: event.card});
        return C.tr(event.from === "upcard" ? "prop_draw_upcard" : "prop_draw_stock", {name});
      default: return C.valuesText(event);
    }
  };
  // A value in the page's words: a cup, a colour, the centre, the upcard or the stock, yes / no by
  // the catalogue's name; a list joined by "+", an object's entries one by one ("blue 3, red 4").
  C.valueText = function (v) {
    if (Array.isArray(v)) return v.map(C.valueText).join(" + ");
    if (v && typeof v === "object") return Object.entries(v).map(([k, x]) => C.valueText(k) + " " + C.valueText(x)).join(", ");
    if (typeof v === "boolean") return C.tr(v ? "yes" : "no");
    if ((v === "upcard" || v === "stock") && C.t["field_" + v] !== undefined) return C.tr("field_" + v);  // Stack 21's draw "from"
    return C.t["cup_" + v] || C.t["colour_" + v] || (v === "center" && C.t.center) || String(v);
  };
  // An event's own values, in order: not its type, source or time, nor an empty one.
  C.eventValues = (event) => Object.entries(event || {})
    .filter(([k, v]) => !["type", "source", "at"].includes(k) && v !== null && v !== undefined).map(([, v]) => v);
  // An event by its plain values alone ("A · blue"), in the page's words where the catalogue names them.
  C.valuesText = (event) => C.eventValues(event).filter((v) => typeof v !== "object").map(C.valueText).join(" · ") || "…";

  C.renderBoard = function (state, root) {
    root.replaceChildren();
    if (!state.game) {
      root.appendChild(C.el("p", {class: "empty"}, C.tr("no_game"), C.el("br"),
        C.el("a", {href: "/setup"}, C.tr("no_game_hint"))));
      return;
    }
    const renderer = C.scoreboards[state.game] || C.scoreboards.generic;
    try { renderer(state, root); } catch (e) {  // a renderer bug must not blank the table
      console.error(e);
      root.replaceChildren();
      C.scoreboards.generic(state, root);
    }
    // "what just happened" may hold a name too long for a phone's line: cut with "…" (app.css),
    // the whole sentence in the title
    for (const line of root.querySelectorAll(".last")) if (!line.title) line.title = line.textContent;
  };
})();
