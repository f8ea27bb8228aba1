// Stack 21: scores (per player or team), round history, each player's stacks.
// Reads scores and detail.stacks.<player> (EVENTS.md); anything else it finds, it shows plainly.
"use strict";
(function () {
  const {el, tr} = window.C;

  function cardsOf(stack) {
    const cards = Array.isArray(stack) ? stack : stack.cards || [];
    const box = el("div", {class: "cards"});
    for (const c of cards) box.appendChild(el("span", {class: "cardc"}, c));
    if (!Array.isArray(stack) && stack.count !== undefined) box.appendChild(el("span", {class: "dim"}, " = " + stack.count));
    return box;
  }

  C.scoreboards.stack21 = function (state, root) {
    C.scoreboards.generic(state, root);
    const d = state.detail || {};
    if (d.upcard) root.appendChild(el("div", {class: "last"}, "↑ ", el("span", {class: "cardc"}, d.upcard)));
    const stacks = d.stacks || {};
    const grid = el("div", {class: "stacks"});
    for (const [player, list] of Object.entries(stacks)) {
      const card = el("div", {class: "stack" + ((state.to_act || []).includes(player) ? " on-turn" : "")},
        el("div", {class: "name"}, player));
      const entries = Array.isArray(list) ? list.map((s, i) => [i + 1, s]) : Object.entries(list || {});
      for (const [id, s] of entries) card.appendChild(el("div", {class: "stackrow"}, el("span", {class: "dim"}, id), cardsOf(s)));
      grid.appendChild(card);
    }
    if (grid.children.length) { root.appendChild(el("h3", {}, tr("stacks"))); root.appendChild(grid); }
    const rounds = d.rounds || d.round_history || [];
    if (rounds.length) {
      const list = el("ol");
      for (const r of rounds) list.appendChild(el("li", {}, Object.entries(r.scores || r).map(([k, v]) => k + " " + v).join(" · ")));
      root.appendChild(el("div", {class: "card"}, el("b", {}, tr("round_history")), list));
    }
  };
})();
