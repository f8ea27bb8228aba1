// Past games: who played, who won and the score of each, from the log; the score-over-time chart
// of one game (hand-drawn SVG) opened under the row it was asked from; the export link; a Resume
// button on each unfinished game that is not the one being played.
"use strict";
document.addEventListener("DOMContentLoaded", async () => {
  const {el, tr} = window.C;
  const list = document.getElementById("games");
  const chart = document.getElementById("chart");
  document.getElementById("conn").dataset.state = "on";
  const PALETTE = ["#f5c542", "#5b9bff", "#ff6b6b", "#27c46b", "#c58bff", "#4fd6e8"];
  const FONT = 13;  // px on the phone: the chart is drawn at the size it is shown, never scaled down
  // The server stores UTC ("…Z"); a player reads the time of their own phone.
  const when = (iso) => {
    const t = new Date(iso || "");
    if (isNaN(t)) return (iso || "").replace("T", " ").slice(0, 16);
    const two = (n) => String(n).padStart(2, "0");
    return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}`;
  };

  // A unit as a player knows it: a team by its members, a side by its name and its players.
  function unitLabel(g, unit) {
    const people = (g.members || {})[unit] || [unit];
    if (people.length === 1 && people[0] === unit) return unit;
    if (g.game === "stack21") return people.join(" + ");
    return unit + " (" + people.join(", ") + ")";
  }

  function result(g, now) {
    if (g.finished === null) return tr("h_unreadable");
    if (!g.finished) return now ? tr("playing_now") : tr("unfinished");
    const names = (g.winners || []).map((u) => unitLabel(g, u));
    return names.length > 1 ? tr("h_shared", {names: C.names(names)}) : names.length ? tr("h_won", {name: names[0]}) : tr("finished");
  }

  // Who played and the score, winners first marked: "Ann 21 · Bea 14".
  function scoreLine(g) {
    const line = el("div", {class: "h-score"});
    for (const unit of g.players || []) {
      const won = (g.winners || []).includes(unit);
      const score = (g.scores || {})[unit];
      line.appendChild(el("span", {class: "h-unit" + (won ? " won" : ""), "data-unit": unit},
        el("span", {class: "nm", title: unitLabel(g, unit)}, (won ? "★ " : "") + unitLabel(g, unit)),
        score === undefined || score === null ? null : el("b", {class: "h-pts"}, score)));
    }
    return line;
  }

  function axisLabel(x, y, text, anchor) {
    const label = C.svg("text", {x, y, fill: "#9aa7b4", "font-size": FONT, "text-anchor": anchor || "middle"});
    label.textContent = text;
    return label;
  }

  async function draw(id, row, scroll) {
    for (const b of list.querySelectorAll("button.chart-btn")) b.setAttribute("aria-pressed", String(b.closest("li") === row));
    row.appendChild(chart);  // under the row it was asked from: on-screen where the player tapped
    chart.hidden = false;
    const r = await C.api("GET", `/api/games/${id}/scores`);
    if (!r.ok) { chart.replaceChildren(el("p", {class: "dim"}, C.refusal(r.data))); return; }
    const {players, points} = r.data;
    // the chart's own pixels, so that a 13 px label is 13 px on the phone
    const W = Math.max(240, Math.round(chart.clientWidth || row.clientWidth || 320));
    const H = Math.round(Math.min(260, Math.max(180, W * 0.6)));
    const L = 36, B = 34, T = 10, R = 10;
    let max = 1;
    for (const p of points) for (const v of Object.values(p.scores)) max = Math.max(max, v);
    const x = (i) => L + (points.length > 1 ? i * (W - L - R) / (points.length - 1) : 0);
    const y = (v) => H - B - v * (H - B - T) / max;
    const svg = C.svg("svg", {viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": tr("score_over_time")});
    const ticks = [...new Set([0, 1, 2, 3, 4].map((k) => Math.round(max * k / 4)))];
    for (const v of ticks) {
      svg.appendChild(C.svg("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#2f3945"}));
      svg.appendChild(axisLabel(L - 6, y(v) + FONT / 3, v, "end"));
    }
    // along the bottom: the event's number, a few of them, and what they count
    const n = points.length;
    const steps = [...new Set([0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * (n - 1))))];
    for (const i of steps) svg.appendChild(axisLabel(x(i), H - B + FONT + 4, i + 1, i === n - 1 && n > 1 ? "end" : i === 0 ? "start" : "middle"));
    svg.appendChild(axisLabel((L + W - R) / 2, H - 4, tr("h_axis_events")));
    const legend = el("div", {class: "legend"});
    players.forEach((name, i) => {
      const colour = PALETTE[i % PALETTE.length];
      const d = points.map((p, j) => (j ? "L" : "M") + x(j).toFixed(1) + " " + y(p.scores[name] || 0).toFixed(1)).join(" ");
      svg.appendChild(C.svg("path", {d, fill: "none", stroke: colour, "stroke-width": 3, "stroke-linejoin": "round", "data-player": name}));
      legend.appendChild(el("span", {style: `color:${colour}`}, "■ " + name + " " + (points.at(-1).scores[name] ?? "")));
    });
    chart.replaceChildren(el("h2", {}, tr("score_over_time") + " · #" + id + " " + C.gameName(r.data.game)), svg, legend);
    if (scroll) chart.scrollIntoView({block: "nearest"});
  }

  // Resume a game; leaving an unfinished current game needs the player's say-so (as a new game).
  // Without the PIN (or with a wrong one) the row shows a PIN field beside Resume, with why.
  async function resume(id, pin) {
    const send = (replace) => C.api("POST", `/api/games/${id}/resume` + (replace ? "?replace=1" : ""));
    pin.take();
    let r = await send(false);
    if (C.pinRefused(r)) { pin.ask(r); return; }
    if (!r.ok && r.data.code === "GAME_IN_PROGRESS") {
      if (!window.confirm(tr("resume_confirm", {id}))) { C.toast(tr("replace_kept"), true); return; }
      r = await send(true);
    }
    if (r.ok) { C.toast(tr("resumed"), true); location.href = "/"; }
    else C.toast(tr("error") + ": " + C.refusal(r.data));
  }

  function resumeForm(id) {
    const pin = C.pinRow(false);
    let busy = false;
    return el("form", {class: "resume-form", onsubmit: async (e) => {
      e.preventDefault();
      if (busy) return;
      busy = true;
      try { await resume(id, pin); } finally { busy = false; }
    }}, pin.row, el("button", {type: "submit", class: "resume okb"}, tr("resume")));
  }

  const r = await C.api("GET", "/api/games");
  if (!r.ok) { list.replaceChildren(el("li", {class: "empty"}, C.refusal(r.data))); return; }  // say why, never "no game"
  if (!r.data.games.length) { list.replaceChildren(el("li", {class: "empty"}, tr("no_game"))); return; }
  let first = null;
  for (const g of r.data.games) {
    const now = g.id === r.data.current;
    const row = el("li", {"data-game": g.id, "data-finished": String(g.finished), "data-current": now});
    const chartBtn = el("button", {type: "button", class: "chart-btn", "aria-pressed": "false", onclick: () => draw(g.id, row, true)}, tr("score_over_time"));
    row.append(
      el("div", {class: "g"},
        el("div", {class: "h-head"}, el("b", {}, "#" + g.id + " " + C.gameName(g.game)), el("span", {class: "dim"}, when(g.created))),
        scoreLine(g),
        el("div", {class: "h-result" + (g.finished ? " done" : "")}, result(g, now))),
      el("div", {class: "h-actions"},
        g.finished === false && !now ? resumeForm(g.id) : null,
        g.finished === null ? null : chartBtn,
        // a game in play whose log holds the stock's face-down cards is not exported until it is over
        g.hidden_cards ? el("span", {class: "dim export-later"}, tr("export_later"))
          : el("a", {href: `/api/games/${g.id}/log.jsonl`, download: `game-${g.id}.jsonl`}, tr("export"))));
    list.appendChild(row);
    if ((now || first === null) && g.finished !== null) first = [g.id, row];
  }
  if (first) draw(first[0], first[1], false);
});
