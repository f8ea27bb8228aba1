// Set-up: game, players or sides, house rules, sheets -> POST /api/games (the new_game event).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const {el, tr} = window.C;
  const form = document.getElementById("setup");
  const game = document.getElementById("game");
  const who = document.getElementById("who");
  const options = document.getElementById("options");
  document.getElementById("conn").dataset.state = "on";
  const lines = (text) => text.split(/\n|,/).map((s) => s.trim()).filter(Boolean);
  // What a field left empty stands for: shown in it as its placeholder, never as a value the
  // player must first delete.
  const SIDES = ["A", "B"], PLAYERS = ["P1", "P2"];
  const COMMON = {stack21: ["target", "stock_exhausted"]};  // the rest under "More options"
  // The PIN is asked here, beside Start, on a phone that has none yet (not by a prompt after it).
  const pinRow = document.getElementById("pin-row");
  const pinInput = document.getElementById("setup-pin");
  pinRow.hidden = !!(C.storedPin() || C.pin);

  // A house rule's choices are radio buttons, not a select: a choice's text ("no move onto a
  // stack already over 150c (default)") wraps on a phone instead of being cut at the select's
  // edge, and picking one is one tap, not two. The form reads the checked one's value.
  function optionInput(name, spec) {
    const label = tr("opt_" + name);
    if (spec.choices) {
      return el("fieldset", {class: "choices", "data-option": name}, el("legend", {}, label),
        spec.choices.map((c) => el("label", {class: "check"},
          el("input", {type: "radio", name: "opt_" + name, value: JSON.stringify(c), checked: c === spec.default}),
          C.t["opt_" + name + "_" + c] || String(c))));
    }
    if (typeof spec.default === "boolean")
      return el("label", {class: "check"}, el("input", {type: "checkbox", name: "opt_" + name, checked: spec.default}), label);
    if (typeof spec.default === "number")
      return el("label", {}, label, el("input", {type: "number", name: "opt_" + name, value: spec.default,
        min: spec.minimum, max: spec.maximum, inputmode: "numeric"}));
    if (Array.isArray(spec.default))  // a list of words, e.g. suits: "hearts, diamonds"
      return el("label", {}, label, el("input", {name: "opt_" + name, value: spec.default.join(", ")}));
    return el("label", {}, label, el("input", {name: "opt_" + name, placeholder: String(spec.default)}));
  }

  function draw() {
    const g = game.value;
    who.replaceChildren();
    if (g === "exact21") {
      for (const [i, side] of ["A", "B"].entries()) {
        who.appendChild(el("fieldset", {}, el("legend", {}, tr("side_n", {n: i + 1})),
          el("label", {}, tr("side_name"), el("input", {name: "side" + i, placeholder: side})),
          el("label", {}, tr("side_players"), el("textarea", {name: "players" + i, rows: 2}))));
      }
    } else {
      who.appendChild(el("label", {}, tr("players") + " (" + tr(g === "twentyone" ? "t21_sheet_hint" : "players_hint") + ")",
        el("textarea", {name: "players", rows: 4, placeholder: PLAYERS.join("\n")})));
      if (g === "stack21") {
        // Team play aims at 42 (the engine's default with teams); the field shows it.
        const teams = el("input", {type: "checkbox", name: "teams", onchange: () => {
          const target = form.elements.opt_target;
          if (target && (target.value === "21" || target.value === "42")) target.value = teams.checked ? "42" : "21";
        }});
        who.appendChild(el("label", {class: "check"}, teams, tr("teams")));
      }
      if (g === "twentyone") who.appendChild(el("label", {}, tr("sheets"), el("textarea", {name: "sheets", rows: 2, placeholder: '{"A": [[["yellow", 6], …]]}'})));
    }
    options.replaceChildren(el("legend", {}, tr("options")));
    // A game with many house rules (Stack 21's virtual deck: decks, face cards, suits, special
    // cards) shows the common ones and keeps the rest closed under "More options".
    const common = COMMON[g], more = el("details", {class: "more"}, el("summary", {}, tr("more_options")));
    const all = window.GAME_OPTIONS[g] || {};
    for (const name of common || []) if (all[name]) options.appendChild(optionInput(name, all[name]));
    for (const [name, spec] of Object.entries(all))
      if (!common) options.appendChild(optionInput(name, spec));
      else if (!common.includes(name)) more.appendChild(optionInput(name, spec));
    if (more.children.length > 1) options.appendChild(more);
  }

  function newGame() {
    const g = game.value;
    const f = form.elements;
    const event = {type: "new_game", game: g, options: {}};
    if (g === "exact21") {
      event.sides = [0, 1].map((i) => {
        const side = {name: f["side" + i].value.trim() || SIDES[i]};
        const players = lines(f["players" + i].value);
        if (players.length) side.players = players;
        return side;
      });
    } else {
      const typed = lines(f.players.value);
      const players = typed.length ? typed : PLAYERS;
      if (g === "twentyone") {
        // "Ann" gets the next free sheet; "Ann = C" picks sheet C.
        const taken = new Set(players.map((p) => (p.split("=")[1] || "").trim().toUpperCase()).filter(Boolean));
        const free = ["A", "B", "C", "D", "E", "F"].filter((s) => !taken.has(s));
        event.players = players.map((p) => {
          const [name, sheet] = p.split("=").map((s) => s.trim());
          return {name, sheet: sheet ? sheet.toUpperCase() : free.shift()};
        });
        if (f.sheets.value.trim()) event.sheets = JSON.parse(f.sheets.value);
      } else event.players = players;
      // Seats 1+3 against 2+4; with other than four players the engine says why (S1).
      if (g === "stack21" && f.teams.checked)
        event.teams = [[players[0], players[2]], [players[1], players[3]]].map((t) => t.filter((p) => p !== undefined));
    }
    for (const [name, spec] of Object.entries(window.GAME_OPTIONS[g] || {})) {
      const input = f["opt_" + name];
      if (!input) continue;
      let value;
      if (spec.choices) value = JSON.parse(input.value);  // a RadioNodeList: the checked one
      else if (typeof spec.default === "boolean") value = input.checked;
      else if (typeof spec.default === "number") value = input.value === "" ? spec.default : Number(input.value);
      else if (Array.isArray(spec.default)) {
        value = lines(input.value);
        if (JSON.stringify(value) === JSON.stringify(spec.default)) continue;
      }
      else value = input.value.trim();
      if (value === "" || value === spec.default) continue;  // defaults need not be sent
      event.options[name] = value;
    }
    return event;
  }

  game.addEventListener("change", draw);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    let event;
    try { event = newGame(); } catch (err) { C.toast(String(err.message || err)); return; }
    // An unfinished game is only left behind when the player says so (it stays in History).
    const start = (replace) => C.api("POST", "/api/games" + (replace ? "?replace=1" : ""), event);
    if (!pinRow.hidden && pinInput.value.trim()) C.storePin(pinInput.value.trim());
    let r = await start(false);
    if (!r.ok && (r.data.code === "PIN_REQUIRED" || r.data.code === "BAD_PIN")) {
      pinRow.hidden = false;
      pinInput.focus();
      C.toast(tr("error") + ": " + C.refusal(r.data));
      return;
    }
    if (!r.ok && r.data.code === "GAME_IN_PROGRESS") {
      if (!window.confirm(tr("replace_confirm"))) { C.toast(tr("replace_kept"), true); return; }
      r = await start(true);
    }
    if (r.ok) { C.toast(tr("started"), true); location.href = "/controller"; }
    else C.toast(tr("error") + ": " + C.refusal(r.data));
  });
  draw();
});
