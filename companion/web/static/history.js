// Past games with export links, the score-over-time chart of one game (hand-drawn SVG), and a
// Resume button on each unfinished game that is not the one being played.
"use strict";
document.addEventListener("DOMContentLoaded", async () => {
  const {el, tr} = window.C;
  const list = document.getElementById("games");
  const chart = document.getElementById("chart");
  document.getElementById("conn").dataset.state = "on";
  const PALETTE = ["#f5c542", "#2f7bff", "#ff4040", "#27c46b", "#c58bff", "#4fd6e8"];
  // The server stores UTC ("…Z"); a player reads the time of their own phone.
  const when = (iso) => {
    const t = new Date(iso || "");
    if (isNaN(t)) return (iso || "").replace("T", " ").slice(0, 16);
    const two = (n) => String(n).padStart(2, "0");
    return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}`;
  };

  async function draw(id) {
    const r = await C.api("GET", `/api/games/${id}/scores`);
    if (!r.ok) { chart.replaceChildren(el("p", {class: "dim"}, r.data.message)); return; }
    const {players, points} = r.data;
    const W = 640, H = 300, L = 40, B = 26, T = 10, R = 10;
    let max = 1;
    for (const p of points) for (const v of Object.values(p.scores)) max = Math.max(max, v);
    const x = (i) => L + (points.length > 1 ? i * (W - L - R) / (points.length - 1) : 0);
    const y = (v) => H - B - v * (H - B - T) / max;
    const svg = C.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": tr("score_over_time")});
    for (let k = 0; k <= 4; k++) {
      const v = Math.round(max * k / 4);
      svg.appendChild(C.svg("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#2f3945"}));
      const label = C.svg("text", {x: L - 6, y: y(v) + 5, fill: "#9aa7b4", "font-size": 14, "text-anchor": "end"});
      label.textContent = v;
      svg.appendChild(label);
    }
    const legend = el("div", {class: "legend"});
    players.forEach((name, i) => {
      const colour = PALETTE[i % PALETTE.length];
      const d = points.map((p, j) => (j ? "L" : "M") + x(j).toFixed(1) + " " + y(p.scores[name] || 0).toFixed(1)).join(" ");
      svg.appendChild(C.svg("path", {d, fill: "none", stroke: colour, "stroke-width": 4, "stroke-linejoin": "round", "data-player": name}));
      legend.appendChild(el("span", {style: `color:${colour}`}, "■ " + name + " " + (points.at(-1).scores[name] ?? "")));
    });
    chart.replaceChildren(el("h2", {}, tr("score_over_time") + " · #" + id + " " + C.gameName(r.data.game)), svg, legend);
  }

  // Resume a game; leaving an unfinished current game needs the player's say-so (as a new game).
  async function resume(id) {
    const send = (replace) => C.api("POST", `/api/games/${id}/resume` + (replace ? "?replace=1" : ""));
    let r = await send(false);
    if (!r.ok && (r.data.code === "PIN_REQUIRED" || r.data.code === "BAD_PIN")) {
      const pin = window.prompt(tr("pin_enter"));
      if (pin) { C.storePin(pin.trim()); r = await send(false); }
    }
    if (!r.ok && r.data.code === "GAME_IN_PROGRESS") {
      if (!window.confirm(tr("resume_confirm", {id}))) { C.toast(tr("replace_kept"), true); return; }
      r = await send(true);
    }
    if (r.ok) { C.toast(tr("resumed"), true); location.href = "/"; }
    else C.toast(tr("error") + ": " + C.refusal(r.data));
  }

  const r = await C.api("GET", "/api/games");
  if (!r.ok) { chart.replaceChildren(el("p", {class: "empty"}, C.refusal(r.data))); return; }  // say why, never "no game"
  if (!r.data.games.length) { chart.replaceChildren(el("p", {class: "empty"}, tr("no_game"))); return; }
  for (const g of r.data.games) {
    const now = g.id === r.data.current;
    const playing = now && g.finished === false;  // a finished game on the table is not "playing now"
    list.appendChild(el("li", {"data-game": g.id, "data-finished": String(g.finished), "data-current": now},
      el("span", {class: "g"}, el("b", {}, "#" + g.id + " " + C.gameName(g.game)), el("br"),
        el("span", {class: "dim"}, when(g.created) + " · " + tr("events", {n: g.events})
          + (playing ? " · " + tr("playing_now") : g.finished === false && !now ? " · " + tr("unfinished") : ""))),
      g.finished === false && !now ? el("button", {type: "button", class: "resume okb", onclick: () => resume(g.id)}, tr("resume")) : null,
      el("button", {type: "button", onclick: () => draw(g.id)}, tr("score_over_time")),
      el("a", {href: `/api/games/${g.id}/log.jsonl`, download: `game-${g.id}.jsonl`}, tr("export"))));
  }
  draw(r.data.current || r.data.games[0].id);
});
