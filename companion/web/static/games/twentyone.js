// Twenty One: every player's sheet live (exact hits ringed, struck cells crossed), row scores,
// the roll, who still has to act. Reads detail.sheets.<player>.rows[] (EVENTS.md).
"use strict";
(function () {
  const {el, tr} = window.C;

  function diceRow(dice) {
    const box = el("div", {class: "cards"});
    for (const [colour, v] of Object.entries(dice)) box.appendChild(el("span", {class: "chip c-" + colour}, v));
    return box;
  }

  function sheetTable(sheet) {
    const table = el("table", {class: "sheet"});
    (sheet.rows || []).forEach((row) => {
      const tr_ = el("tr");
      for (const cell of row.cells || row) {
        const filled = cell.value !== null && cell.value !== undefined;
        tr_.appendChild(el("td", {class: "c-" + cell.color + (cell.exact ? " exact" : "") + (cell.struck ? " struck" : "")
          + (filled || cell.struck ? "" : " empty-cell"), title: cell.exact ? tr("exact_hit") : cell.struck ? tr("struck") : ""},
          cell.struck ? "/" : filled ? String(cell.value) + (cell.exact ? "×" : "") : "",
          el("span", {class: "pr"}, cell.printed)));
      }
      tr_.appendChild(el("td", {class: "rs"}, row.score === null || row.score === undefined ? "" : row.score));
      table.appendChild(tr_);
    });
    return table;
  }

  C.scoreboards.twentyone = function (state, root) {
    const d = state.detail || {};
    const dice = d.dice || d.roll;
    if (dice && typeof dice === "object") root.appendChild(el("div", {class: "card"}, el("b", {}, tr("roll")), diceRow(dice)));
    const grid = el("div", {class: "players-grid sheets-grid"});
    for (const p of state.players || []) {
      const sheet = (d.sheets || {})[p];
      const card = el("div", {class: "player" + ((state.to_act || []).includes(p) ? " on-turn" : "")
        + ((state.winners || []).includes(p) ? " won" : ""), "data-player": p},
        el("div", {class: "name"}, p + (sheet && sheet.sheet ? " · " + tr("sheet_for") + " " + sheet.sheet : "")),
        el("div", {class: "big-num score"}, (state.scores || {})[p] ?? "–"));
      if (sheet) card.appendChild(sheetTable(sheet));
      grid.appendChild(card);
    }
    root.appendChild(grid);
  };
})();
