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

  C.gameName = (g) => C.t["game_" + g] || g;
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
  C.api = async function (method, path, body) {
    const headers = {"Accept": "application/json"};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const pin = C.storedPin() || C.pin;
    if (pin && method !== "GET") headers["X-Table-Pin"] = pin;
    if (C.rev && method !== "GET") headers["X-Table-Rev"] = C.rev;
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

  // A refusal as a sentence: the page's own codes (PIN, STALE) in the phone's language, else the
  // engine's sentence.
  C.refusal = (data) => C.t["code_" + data.code] || data.message || data.code;

  // Send a change; a refusal is explained in the toast (the engine's own sentence).
  C.change = async function (method, path, body) {
    const r = await C.api(method, path, body);
    if (!r.ok) C.toast(C.tr("error") + ": " + C.refusal(r.data));
    else C.clearError();
    if (r.ok && r.data && r.data.game !== undefined && C.render) C.render(r.data, true);
    return r;
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
    function live(on) {
      if (conn) conn.dataset.state = on ? "on" : (pollTimer ? "poll" : "off");
      if (notLive) notLive.hidden = on || !pollTimer;
    }
    async function readState() {
      const r = await C.api("GET", "/api/state");
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
      };
      source.onerror = () => {
        live(false);
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
      box.appendChild(C.el("div", {class: "win"}, w.length > 1 ? C.tr("winners", {names: C.names(w)})
        : w.length ? C.tr("winner", {name: w[0]}) : C.tr("finished")));
    } else if ((state.to_act || []).length) {
      const act = C.el("div", {class: "act"});
      act.innerHTML = "";
      act.appendChild(document.createTextNode(C.tr("to_act", {names: ""})));
      act.appendChild(C.el("b", {}, C.names(state.to_act)));
      box.appendChild(act);
    }
    return box;
  };

  C.describe = function (event) {  // a short human line for an event (pending proposals, buttons)
    const parts = [event.type];
    for (const [k, v] of Object.entries(event)) {
      if (k === "type" || k === "source" || k === "at") continue;
      parts.push(k + " " + (typeof v === "object" ? JSON.stringify(v) : v));
    }
    return parts.join(" · ");
  };

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
  };
})();
