// Twenty One: the roll on the table (six coloured dice), the roller, re-roll or final, who still
// has to act, and every player's sheet live (printed numbers, entered values, exact hits X,
// struck cells /, row scores, total). The controller takes the roll by six colour pickers (or
// six typed digits) and offers each waiting player the colours the engine allows
// (detail.choices.<player>) and the cell a strike would hit.
"use strict";
(function () {
  const {el, tr} = window.C;
  const COLOURS = ["white", "black", "red", "blue", "yellow", "green"];
  const colourName = (c) => tr("colour_" + c);

  function die(colour, value, extra) {
    return el("span", {class: "die c-" + colour + (extra || ""), "data-die": colour, title: colourName(colour)},
      value === undefined || value === null ? "·" : value);
  }

  function rollCard(state) {
    const d = state.detail;
    const card = el("div", {class: "card t21-turn"},
      el("div", {class: "t21-head"}, el("b", {}, tr("t21_turn", {n: d.turn})), " · ",
        el("span", {"data-roller": d.roller}, tr("t21_rolls", {name: d.roller}))));
    if (!d.roll) {
      card.appendChild(el("div", {class: "dim t21-wait"}, tr("t21_waiting_roll", {name: d.roller})));
      return card;
    }
    const dice = el("div", {class: "dice-row"});
    for (const c of COLOURS) dice.appendChild(die(c, d.roll[c]));
    card.appendChild(dice);
    const flag = d.rerolled ? tr("t21_rerolled") : d.roll_final ? tr("t21_roll_final") : tr("t21_reroll_available");
    card.appendChild(el("div", {class: "t21-flag" + (d.roll_final ? "" : " open"), "data-reroll": d.roll_final ? "no" : "yes"}, flag));
    if (d.first_roll) {
      const before = el("div", {class: "dice-row small"}, el("span", {class: "dim"}, tr("t21_first_roll") + " "));
      for (const c of COLOURS) before.appendChild(die(c, d.first_roll[c]));
      card.appendChild(before);
    }
    const who = el("div", {class: "t21-who"});
    for (const p of state.players) {
      const done = (d.acted || []).includes(p);
      who.appendChild(el("span", {class: "who-chip" + (done ? " done" : ""), "data-acted": done ? "yes" : "no", title: p},
        (done ? "✓ " : "") + p));
    }
    card.appendChild(who);
    return card;
  }

  function lastLine(state) {
    const last = state.detail.last;
    if (!last) return null;
    let text;
    if (last.type === "roll" || last.type === "reroll")
      text = tr(last.type === "roll" ? "t21_last_roll" : "t21_last_reroll", {name: last.player});
    else if (last.type === "enter")
      text = tr("t21_last_enter", {name: last.player, dice: last.entered.map((e) => colourName(e.color) + " " + e.value
        + (e.exact ? " X" : "")).join(", ")});
    else if (last.type === "strike")
      text = tr("t21_last_strike", {name: last.player, row: last.row, cell: last.cell, colour: colourName(last.color)});
    else return null;
    if (last.scored) text += " · " + tr("t21_scored", {row: last.scored.row, score: last.scored.score});
    return el("div", {class: "last"}, text);
  }

  function sheetTable(sheet) {
    const table = el("table", {class: "sheet"});
    (sheet.rows || []).forEach((row, r) => {
      const current = sheet.row === r + 1;
      const line = el("tr", {class: current ? "current" : "", "data-row": r + 1},
        el("th", {class: "rn"}, current ? "▶" : r + 1));
      (row.cells || []).forEach((cell, i) => {
        const filled = cell.value !== null && cell.value !== undefined;
        const title = colourName(cell.color) + " ≤ " + cell.printed
          + (cell.exact ? " · " + tr("exact_hit") : cell.struck ? " · " + tr("struck") : "");
        line.appendChild(el("td", {class: "c-" + cell.color + (cell.exact ? " exact" : "") + (cell.struck ? " struck" : "")
          + (filled || cell.struck ? "" : " empty-cell"), title, "data-cell": i + 1},
          cell.struck ? "/" : filled ? String(cell.value) : "",
          cell.exact ? el("span", {class: "x"}, "X") : null,
          el("span", {class: "pr"}, cell.printed)));
      });
      line.appendChild(el("td", {class: "rs", "data-row-score": r + 1}, row.score === null || row.score === undefined ? "" : row.score));
      table.appendChild(line);
    });
    return table;
  }

  C.scoreboards.twentyone = function (state, root) {
    const d = state.detail || {};
    if (d.roller && !state.finished) root.appendChild(rollCard(state));
    const last = lastLine(state);
    if (last) root.appendChild(last);
    const grid = el("div", {class: "players-grid sheets-grid"});
    for (const p of state.players || []) {
      const sheet = (d.sheets || {})[p];
      const waiting = !state.finished && (state.to_act || []).includes(p);
      const card = el("div", {class: "player" + (waiting ? " on-turn" : "")
        + ((state.winners || []).includes(p) ? " won" : ""), "data-player": p},
        el("div", {class: "t21-name"},
          el("span", {class: "name", title: p}, p),
          p === d.roller && !state.finished ? el("span", {class: "roller-tag"}, tr("t21_roller")) : null,
          el("span", {class: "dim"}, sheet && sheet.sheet ? tr("sheet_for") + " " + sheet.sheet
            + (sheet.provisional ? "*" : "") : ""),
          el("span", {class: "big-num score", "data-score": p}, (state.scores || {})[p] ?? "–")));
      if (sheet) card.appendChild(sheetTable(sheet));
      grid.appendChild(card);
    }
    root.appendChild(grid);
    if (Object.values(d.sheets || {}).some((s) => s.provisional))
      root.appendChild(el("div", {class: "dim note"}, "* " + tr("t21_provisional")));
  };

  // -- controller

  const rolls = {};   // "roll|turn" or "reroll|turn" -> {colour: value}, kept across re-renders
  const picks = {};   // "turn|roll|player" -> Set of colours chosen to enter

  // The roll (kind "roll") is typed in the dock, under the thumb: six digits, the sixth sends it,
  // or the Roll button beside the field; its six colour pickers stay in the page above (returned
  // as ``pickers``). The re-roll (opened on request) keeps field, pickers and button together.
  function diceForm(state, kind) {
    const d = state.detail;
    const key = kind + "|" + d.turn;
    const docked = kind === "roll";
    const locked = kind === "reroll" ? COLOURS.filter((c) => d.roll[c] === 1) : [];
    const values = rolls[key] = rolls[key] || Object.fromEntries(locked.map((c) => [c, 1]));
    const heading = tr(kind === "roll" ? "t21_set_roll" : "t21_set_reroll", {name: d.roller});
    const form = el("form", {class: docked ? "t21-dice" : "card dice-entry t21-dice", "data-kind": kind},
      docked ? null : el("h2", {}, heading));
    const pickBox = docked ? el("div", {class: "card dice-entry t21-pickers"}, el("h2", {}, heading)) : form;
    const typed = el("input", {name: "typed", inputmode: "numeric", maxlength: 6, autocomplete: "off",
      placeholder: tr("t21_type_digits"), "aria-label": docked ? tr("t21_type_hint") : tr("t21_type_digits")});
    const pickers = {};
    function press(c, v) {
      values[c] = v;
      for (const o of pickers[c].children) o.setAttribute("aria-pressed", Number(o.dataset.value) === v ? "true" : "false");
    }
    // The sixth digit sends the roll: on a phone the Roll button sits under the open keyboard
    // and six rows of pickers. Only a field of exactly six dice (1-6, spaces aside) is sent; any
    // other character waits for the player (and the button).
    let sending = false;
    typed.addEventListener("input", () => {
      const digits = typed.value.replace(/[^1-6]/g, "").slice(0, 6);
      COLOURS.forEach((c, i) => { if (i < digits.length && !locked.includes(c)) press(c, Number(digits[i])); });
      if (/^[1-6]{6}$/.test(typed.value.replace(/\s/g, "")) && !sending) form.requestSubmit();
    });
    if (docked) pickBox.appendChild(el("p", {class: "dim"}, tr("t21_type_hint")));
    else form.appendChild(el("label", {}, tr("t21_type_hint"), typed));
    for (const c of COLOURS) {
      const opts = el("div", {class: "opts"});
      pickers[c] = opts;
      for (let v = 1; v <= 6; v++) {
        const b = el("button", {type: "button", class: "c-" + c, "aria-pressed": values[c] === v ? "true" : "false",
          "data-colour": c, "data-value": v, disabled: locked.includes(c) && v !== 1}, v);
        b.addEventListener("click", () => press(c, v));
        opts.appendChild(b);
      }
      pickBox.appendChild(el("div", {class: "picker"}, el("div", {class: "lab"}, colourName(c)
        + (locked.includes(c) ? " · " + tr("t21_one_locked") : "")), opts));
    }
    if (docked) form.appendChild(typed);
    form.appendChild(el("button", {type: "submit", class: "primary big"}, tr(kind === "roll" ? "t21_roll" : "t21_reroll")));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (sending) return;
      const event = {type: kind, player: d.roller, dice: Object.assign({}, values)};
      if (kind === "reroll" && locked.length) event.kept = locked;
      sending = true;
      try {
        const r = await C.send(event);
        if (r.ok) delete rolls[key];
      } finally { sending = false; }
    });
    if (docked) form.pickers = pickBox;
    return form;
  }

  let rerollOpen = false;

  function rerollBox(state) {
    const box = el("details", {class: "card t21-reroll"}, el("summary", {}, tr("t21_reroll_open", {name: state.detail.roller})),
      diceForm(state, "reroll"));
    box.open = rerollOpen;
    box.addEventListener("toggle", () => { rerollOpen = box.open; });
    return box;
  }

  // A waiting player's entry, one compact block each in the dock: name and row, the six dice of
  // the roll, then Enter and Strike.
  function playerCard(state, player) {
    const d = state.detail;
    const ch = (d.choices || {})[player] || {enter: [], exact: [], strike: null};
    const sheet = (d.sheets || {})[player] || {};
    const key = d.turn + "|" + JSON.stringify(d.roll) + "|" + player;
    const chosen = picks[key] = picks[key] || new Set();
    const row = sheet.row ? sheet.rows[sheet.row - 1] : null;
    const s = ch.strike;
    const strike = el("button", {type: "button", class: "badb", "data-strike": player, disabled: !s,
      onclick: () => C.send({type: "strike", player})},
      s ? tr("t21_strike", {row: s.row, cell: s.cell, colour: colourName(s.color), printed: s.printed}) : tr("struck"));
    const card = el("div", {class: "card t21-act", "data-player": player},
      el("div", {class: "t21-act-head"}, el("span", {class: "nm", title: player}, player),
        el("span", {class: "row-n"}, tr("row", {n: sheet.row || "–"}))));
    const grid = el("div", {class: "t21-pick"});
    const enterButton = el("button", {type: "button", class: "primary", "data-enter": player, disabled: !chosen.size},
      tr("t21_enter", {n: chosen.size || ""}));
    for (const c of COLOURS) {
      const allowed = ch.enter.includes(c);
      const cell = row ? row.cells.find((x) => x.color === c) : null;
      const exact = ch.exact.includes(c);
      const b = el("button", {type: "button", class: "c-" + c + (exact ? " would-exact" : ""), "data-colour": c,
        "aria-pressed": chosen.has(c) ? "true" : "false", disabled: !allowed,
        title: colourName(c)},
        el("span", {class: "v"}, d.roll[c]),
        el("small", {}, cell ? (cell.value !== null || cell.struck ? tr("t21_cell_used") : "≤ " + cell.printed) : ""),
        exact ? el("small", {class: "tag"}, tr("t21_exact_tag")) : null);
      b.addEventListener("click", () => {
        if (chosen.has(c)) chosen.delete(c); else chosen.add(c);
        b.setAttribute("aria-pressed", chosen.has(c) ? "true" : "false");
        enterButton.disabled = !chosen.size;
        enterButton.textContent = tr("t21_enter", {n: chosen.size || ""});
      });
      grid.appendChild(b);
    }
    card.appendChild(grid);
    if (!ch.enter.length) card.appendChild(el("div", {class: "dim"}, tr("t21_nothing_fits")));
    card.appendChild(el("div", {class: "row t21-buttons"}, enterButton, strike));
    enterButton.addEventListener("click", async () => {
      const colors = COLOURS.filter((c) => chosen.has(c));
      const r = await C.send({type: "enter", player, colors});
      if (r.ok) delete picks[key];
    });
    return card;
  }

  C.controllers.twentyone = function (state, root) {
    if (state.finished) return;
    const d = state.detail || {};
    const types = new Set((state.legal || []).map((a) => a.type));
    if (types.has("roll") || !d.roll) {
      const form = diceForm(state, "roll");
      root.append(form.pickers, C.dock(el("div", {class: "who"}, tr("t21_set_roll", {name: d.roller})), form));
      return;
    }
    root.appendChild(el("div", {class: "card t21-turn"}, el("div", {class: "dice-row"},
      ...COLOURS.map((c) => die(c, d.roll[c])))));
    if (types.has("reroll")) root.appendChild(rerollBox(state));
    // every waiting player's entry in the dock, under the thumb; from three waiting players on,
    // one entry at a time (the dock would grow past the screen): a tab per player above it, the
    // first one waiting shown until another is tapped
    const waiting = d.waiting || [];
    if (waiting.length > 2) root.appendChild(C.dock(whoTabs(state, waiting), playerCard(state, shownPlayer)));
    else if (waiting.length) root.appendChild(C.dock(...waiting.map((p) => playerCard(state, p))));
  };

  let shownPlayer = null;  // the waiting player whose entry the dock shows, kept across re-renders
  function whoTabs(state, waiting) {
    if (!waiting.includes(shownPlayer)) shownPlayer = waiting[0];
    return el("div", {class: "t21-who", role: "group", "aria-label": tr("t21_who_tabs")},
      ...waiting.map((p) => el("button", {type: "button", class: "nm", "data-tab": p, title: p,
        "aria-pressed": p === shownPlayer ? "true" : "false",
        onclick: () => { shownPlayer = p; C.render(state); }}, p)));
  }
})();
