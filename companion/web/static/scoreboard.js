// The scoreboard: the game's own renderer, fed live by the stream; a finished game's final
// standings with Rematch and New game.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const {el, tr} = window.C;
  const board = document.getElementById("board");
  const status = document.getElementById("status");
  const pending = document.getElementById("pending");
  const final = document.getElementById("final");
  C.connect((state) => {
    status.replaceChildren(C.statusLine(state));
    C.showFinal(state, final);
    C.renderBoard(state, board);
    const list = state.pending || [];
    pending.hidden = !list.length;
    pending.replaceChildren(...list.map((p) => el("div", {class: "p"}, el("span", {class: "what"}, tr("pending") + ": " + C.eventText(p.event, state)))));
  });
});
