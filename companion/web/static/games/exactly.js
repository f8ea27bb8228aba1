// exactly: every stack's coins and total, trophies, whose turn and the roll.
// Reads detail.stacks.<player|center>.total (cents) and scores (trophies), EVENTS.md.
"use strict";
(function () {
  const {el, tr} = window.C;
  const cents = (n) => (n === undefined || n === null ? "–" : n + "c");

  function coins(stack) {
    const box = el("div", {class: "cards"});
    const tokens = stack.tokens || stack.coins;
    if (Array.isArray(tokens)) for (const t of tokens) box.appendChild(el("span", {class: "chip c-silver"}, t));
    else if (tokens && typeof tokens === "object")
      for (const [v, n] of Object.entries(tokens)) if (n) box.appendChild(el("span", {class: "chip c-silver"}, n + "×" + v));
    return box;
  }

  C.scoreboards.exactly = function (state, root) {
    const d = state.detail || {};
    const roll = d.roll ?? d.face;
    if (roll !== undefined && roll !== null)
      root.appendChild(el("div", {class: "last"}, tr("roll") + ": ", el("b", {class: "chip c-yellow"}, roll)));
    const grid = el("div", {class: "stacks"});
    const stacks = d.stacks || {};
    for (const p of [...(state.players || []), "center"]) {
      const s = stacks[p] || {};
      const trophies = p === "center" ? null : (state.scores || {})[p] || 0;
      grid.appendChild(el("div", {class: "stack" + ((state.to_act || []).includes(p) ? " on-turn" : "")
        + (s.total === 100 ? " at100" : ""), "data-stack": p},
        el("div", {class: "name"}, p === "center" ? tr("center") : p),
        el("div", {class: "cents"}, cents(s.total)),
        coins(s),
        trophies === null ? null : el("div", {class: "trophies", title: tr("trophies")}, "★".repeat(trophies) || "☆")));
    }
    root.appendChild(grid);
  };
})();
