// The players, as scoreboard apps keep them: games played and won per player and per game, best
// scores, winning streaks, and head to head; every figure from the table's log (/api/players).
"use strict";
document.addEventListener("DOMContentLoaded", async () => {
  const {el, tr} = window.C;
  const counted = document.getElementById("counted");
  const people = document.getElementById("people");
  const h2h = document.getElementById("h2h");
  document.getElementById("conn").dataset.state = "on";
  const name = (tag, text, cls) => el(tag, {class: "nm" + (cls ? " " + cls : ""), title: text}, text);

  const r = await C.api("GET", "/api/players");
  if (!r.ok) { people.replaceChildren(el("p", {class: "empty"}, C.refusal(r.data))); return; }
  const data = r.data;
  counted.textContent = tr("p_counted", {n: data.counted}) + (data.unfinished ? " · " + tr("p_unfinished", {n: data.unfinished}) : "");
  if (!data.players.length) { people.replaceChildren(el("p", {class: "empty"}, tr("p_none"))); return; }

  for (const p of data.players) {
    const rows = Object.entries(p.games).map(([game, g]) => el("tr", {"data-game": game},
      el("th", {scope: "row"}, C.gameName(game)), el("td", {class: "n"}, g.played), el("td", {class: "n"}, g.won),
      el("td", {class: "n"}, g.best === null ? "–" : g.best)));
    people.appendChild(el("article", {class: "card person", "data-player": p.name},
      el("h2", {}, name("span", p.name)),
      el("div", {class: "p-totals"},
        el("span", {class: "p-big", "data-played": p.played}, el("b", {}, p.played), " ", tr("p_played")),
        el("span", {class: "p-big", "data-won": p.won}, el("b", {}, p.won), " ", tr("p_won")),
        el("span", {class: "dim"}, tr("p_win_rate", {n: Math.round(100 * p.won / p.played)}))),
      el("div", {class: "p-streak", "data-streak": p.streak, "data-best-streak": p.best_streak},
        tr("p_streak", {n: p.streak}) + " · " + tr("p_best_streak", {n: p.best_streak})),
      el("table", {class: "p-games"},
        el("thead", {}, el("tr", {}, el("th", {scope: "col"}, tr("game")), el("th", {scope: "col", class: "n"}, tr("p_played")),
          el("th", {scope: "col", class: "n"}, tr("p_won")), el("th", {scope: "col", class: "n"}, tr("p_best")))),
        el("tbody", {}, rows))));
  }

  if (data.head_to_head.length) {
    h2h.hidden = false;
    h2h.replaceChildren(el("h2", {}, tr("p_head_to_head")), el("ul", {class: "h2h-list"}, data.head_to_head.map((h) => {
      const rest = h.played - h.a_won - h.b_won;
      return el("li", {"data-a": h.a, "data-b": h.b},
        el("div", {class: "h2h-row"}, name("span", h.a, "a" + (h.a_won > h.b_won ? " lead" : "")),
          el("b", {class: "h2h-score"}, h.a_won + " : " + h.b_won),
          name("span", h.b, "b" + (h.b_won > h.a_won ? " lead" : ""))),
        el("div", {class: "dim h2h-games"}, tr("p_h2h_games", {n: h.played}) + (rest ? " · " + tr("p_h2h_draws", {n: rest}) : "")));
    })));
  }
});
