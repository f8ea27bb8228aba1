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
  const dev = document.getElementById("dev");

  async function enter(pin) {
    const r = await C.api("POST", "/api/login", {pin});
    if (r.ok) { C.storePin(pin); login.hidden = true; C.toast(tr("pin_ok"), true); }
    else { login.hidden = false; C.toast(C.t["code_" + r.data.code] ? C.refusal(r.data) : tr("pin_wrong")); }
    return r.ok;
  }
  C.onPinNeeded = () => { login.hidden = false; };
  C.startQueue();  // taps made while the table is away wait, and go when it is back

  // The controller QR code carries the PIN in the fragment (never sent in a request line or log).
  const m = /(?:^|[#&])pin=([^&]+)/.exec(location.hash);
  if (m) { enter(decodeURIComponent(m[1])); history.replaceState(null, "", location.pathname + location.search); }
  else if (!C.storedPin() && !C.pin) login.hidden = false;
  login.addEventListener("submit", (e) => { e.preventDefault(); enter(document.getElementById("pin-input").value.trim()); });

  // Undo sits in the bar under the thumb and says what it takes back ("Undo: Ann → blue"), from
  // the game's own account of its last event; with nothing to undo it is off.
  const undo = document.getElementById("undo");
  undo.addEventListener("click", () => C.change("POST", "/api/undo"));
  function undoWhat(state) {
    const last = (state.detail || {}).last;
    if (!last) return null;
    const name = last.player || last.dealer || last.next;
    const cents = (s) => (s === "center" ? tr("center") : s);
    switch (state.game + " " + last.type) {
      case "exact21 throw": return last.player + " → " + tr("cup_" + last.cup);
      case "exact21 dice": return tr("u_dice", {side: last.side});
      case "twentyone roll": return tr("t21_last_roll", {name});
      case "twentyone reroll": return tr("t21_last_reroll", {name});
      case "twentyone enter": return tr("t21_last_enter", {name, dice: (last.entered || []).map((e) => tr("colour_" + e.color) + " " + e.value).join(", ")});
      case "twentyone strike": return tr("t21_last_strike", {name, row: last.row, cell: last.cell, colour: tr("colour_" + last.color)});
      case "exactly start_roll": return tr("x_last_start", {name});
      case "exactly roll": return tr("u_rolled_face", {name, face: last.face});
      case "exactly move": return tr("x_last_move", {name, value: last.value, from: cents(last.from), to: cents(last.to)});
      default: break;
    }
    const key = {draw: "s21_last_draw", keep: "s21_last_keep", place: "s21_last_place", give: "s21_last_give",
      take_upcard: "s21_last_take", combine: "s21_last_combine", deal: "s21_last_deal"}[last.type];
    if (state.game === "stack21" && key)
      return tr(key, Object.assign({}, last, {name, stacks: (last.stacks || []).join(" + ")}));
    return null;
  }
  function showUndo(state) {
    const what = state.game && state.seq > 1 ? undoWhat(state) : null;
    const text = what ? tr("undo_what", {what}) : tr("undo");
    undo.textContent = "↶ " + text;
    undo.title = text;
    undo.disabled = !state.game || !(state.seq > 1);
  }
  const newDemo = document.getElementById("new-demo");  // only while the demo table plays
  if (newDemo) newDemo.addEventListener("click", () => C.change("POST", "/api/demo/new"));

  // The dock (a game's main actions, fixed above the thumb bar) and the bar take room at the
  // foot of the screen: the page is padded by their measured heights, so its last line and the
  // board are never under them.
  const thumb = document.getElementById("thumb");
  function fitDock() {
    const dock = controls.querySelector(".dock");
    document.body.style.setProperty("--thumb-h", thumb.getBoundingClientRect().height + "px");
    document.body.style.setProperty("--dock-h", (dock ? dock.getBoundingClientRect().height : 0) + "px");
    document.body.classList.toggle("docked", !!dock);
  }
  window.addEventListener("resize", fitDock);

  // A camera proposal is confirmed or rejected by the same two calls from the list at the top of
  // the page and from the dock.
  const confirmIt = (p) => C.change("POST", `/api/pending/${p.id}/confirm`);
  const rejectIt = (p) => C.change("POST", `/api/pending/${p.id}/reject`);
  // While the camera proposes something in play, the oldest proposal's Confirm and Reject sit at
  // the top of the dock too (with what it is, in two lines at most, cut with "…"), so a player who
  // has scrolled down reaches them under the thumb; the next one follows once it is settled.
  function dockProposal(p, state) {
    let dock = controls.querySelector(".dock");
    if (!dock) { dock = C.dock(); controls.appendChild(dock); }
    const what = C.eventText(p.event, state);
    // a long one (Twenty One's six dice) on a line of its own, Confirm and Reject under it
    dock.prepend(el("div", {class: "dock-prop" + (what.length > 28 ? " long" : ""), "data-dock-proposal": p.id, role: "group",
                            "aria-label": tr("pending") + ": " + what},
      el("span", {class: "what", title: what}, what),
      el("button", {type: "button", class: "okb", onclick: () => confirmIt(p)}, tr("confirm")),
      el("button", {type: "button", class: "badb", onclick: () => rejectIt(p)}, tr("reject"))));
  }

  C.connect((state) => {
    showUndo(state);
    status.replaceChildren(C.statusLine(state));
    C.showFinal(state, final);
    const list = state.pending || [];
    pending.hidden = !list.length;
    pending.replaceChildren(...list.map((p) => el("div", {class: "p", "data-proposal": p.id},
      el("span", {class: "what"}, tr("pending") + ": " + C.eventText(p.event, state)),
      el("button", {type: "button", class: "okb", onclick: () => confirmIt(p)}, tr("confirm")),
      el("button", {type: "button", class: "badb", onclick: () => rejectIt(p)}, tr("reject")))));
    controls.replaceChildren();
    mini.replaceChildren();
    if (!state.game) { C.renderBoard(state, controls); fitDock(); return; }
    (C.controllers[state.game] || C.controllers.generic)(state, controls);
    if (list.length && !state.finished) dockProposal(list[0], state);
    C.renderBoard(state, mini);
    // the raw JSON box at the foot of the page, under the board, closed: for developers, not players
    if (C.controllers[state.game] && !state.finished) {
      const open = dev.querySelector("details[open]") !== null;
      const box = C.rawEvent(state);
      box.open = open;
      dev.replaceChildren(box);
    } else dev.replaceChildren();
    fitDock();
  });
});
