// The controller: enter any event by taps, confirm or reject what the camera proposed, undo.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const {el, tr} = window.C;
  const login = document.getElementById("login");
  const controls = document.getElementById("controls");
  const status = document.getElementById("status");
  const pending = document.getElementById("pending");
  const mini = document.getElementById("mini");
  const final = document.getElementById("final");

  async function enter(pin) {
    const r = await C.api("POST", "/api/login", {pin});
    if (r.ok) { C.storePin(pin); login.hidden = true; C.toast(tr("pin_ok"), true); }
    else { login.hidden = false; C.toast(C.t["code_" + r.data.code] ? C.refusal(r.data) : tr("pin_wrong")); }
    return r.ok;
  }
  C.onPinNeeded = () => { login.hidden = false; };

  // The controller QR code carries the PIN in the fragment (never sent in a request line or log).
  const m = /(?:^|[#&])pin=([^&]+)/.exec(location.hash);
  if (m) { enter(decodeURIComponent(m[1])); history.replaceState(null, "", location.pathname + location.search); }
  else if (!C.storedPin() && !C.pin) login.hidden = false;
  login.addEventListener("submit", (e) => { e.preventDefault(); enter(document.getElementById("pin-input").value.trim()); });

  document.getElementById("undo").addEventListener("click", () => C.change("POST", "/api/undo"));
  const newDemo = document.getElementById("new-demo");  // only while the demo table plays
  if (newDemo) newDemo.addEventListener("click", () => C.change("POST", "/api/demo/new"));

  C.connect((state) => {
    status.replaceChildren(C.statusLine(state));
    C.showFinal(state, final);
    const list = state.pending || [];
    pending.hidden = !list.length;
    pending.replaceChildren(...list.map((p) => el("div", {class: "p", "data-proposal": p.id},
      el("span", {class: "what"}, tr("pending") + ": " + C.describe(p.event)),
      el("button", {type: "button", class: "okb", onclick: () => C.change("POST", `/api/pending/${p.id}/confirm`)}, tr("confirm")),
      el("button", {type: "button", class: "badb", onclick: () => C.change("POST", `/api/pending/${p.id}/reject`)}, tr("reject")))));
    controls.replaceChildren();
    mini.replaceChildren();
    if (!state.game) { C.renderBoard(state, controls); return; }
    (C.controllers[state.game] || C.controllers.generic)(state, controls);
    if (C.controllers[state.game] && !state.finished) controls.appendChild(C.rawEvent(state));
    C.renderBoard(state, mini);
  });
});
