// 21 Exact: each side's score, cups left per colour with their value, the silver rule, the
// ways still open to exactly 21; the controller takes dice by pickers and throws by big buttons.
"use strict";
(function () {
  const {el, tr} = window.C;
  const COLOURS = ["blue", "red", "green", "yellow"];

  function chip(colour, text) { return el("span", {class: "chip c-" + colour}, text); }

  function way(w, values) {
    const li = el("li");
    for (const c of COLOURS) {
      const n = (w.cups || {})[c];
      if (n) li.appendChild(chip(c, (n > 1 ? n + "×" : "") + values[c]));
    }
    if (w.silver) li.appendChild(chip("silver", (w.silver > 1 ? w.silver + "×" : "") + "1"));
    li.appendChild(el("span", {class: "dim"}, " " + tr(w.throws === 1 ? "throw_one" : "throws", {n: w.throws})));
    return li;
  }

  function sideCard(state, name) {
    const d = state.detail.sides[name];
    const onTurn = !state.finished && (state.to_act || []).includes(name);
    const won = (state.winners || []).includes(name);
    const card = el("div", {class: "side" + (onTurn ? " on-turn" : "") + (won ? " won" : ""), "data-side": name},
      el("h2", {}, el("span", {class: "nm", title: name}, name), el("span", {class: "big-num score", "data-score": name}, d.total)),
      el("div", {class: "players", title: (d.players || []).join(" · ")}, (d.players || []).join(" · ")));
    if (!d.values) {
      card.appendChild(el("div", {class: "need"}, tr("dice_not_set")));
      return card;
    }
    card.appendChild(el("div", {class: "need"}, won ? "21!" : tr("need", {n: d.need})
      + (onTurn && state.detail.thrower ? " · " + tr("thrower", {name: state.detail.thrower}) : "")));
    const cups = el("div", {class: "cups"});
    for (const c of COLOURS) {
      const left = d.cups[c];
      cups.appendChild(el("div", {class: "cup c-" + c + (left ? "" : " gone"), title: tr("cup_" + c)},
        el("span", {class: "v"}, d.values[c]),
        el("span", {class: "n left", "data-left": left}, "×" + left)));
    }
    card.appendChild(cups);
    card.appendChild(el("div", {class: "silver" + (d.silver_active ? " on" : "")},
      tr(d.silver_active ? "silver_on" : "silver_off"),
      d.silver_points ? " · " + tr("silver_points", {n: d.silver_points}) : ""));
    if (!won) {
      const ways = d.ways || [];
      const list = el("ul");
      for (const w of ways.slice(0, 4)) list.appendChild(way(w, d.values));
      card.appendChild(el("div", {class: "ways"}, el("b", {}, tr("ways")),
        ways.length ? list : el("div", {class: "dim"}, tr("no_ways"))));
    }
    return card;
  }

  function lastLine(state) {
    const last = state.detail.last;
    if (!last || last.type !== "throw") return null;
    if (last.cup === "miss") return el("div", {class: "last"}, tr("last_miss", {player: last.player}));  // not "miss (miss)"
    const result = tr("result_" + last.result, {points: last.points});
    return el("div", {class: "last"}, tr("last_throw", {player: last.player, cup: tr("cup_" + last.cup), result}));
  }

  C.scoreboards.exact21 = function (state, root) {
    const sides = el("div", {class: "sides"});
    for (const name of state.players) sides.appendChild(sideCard(state, name));
    root.appendChild(sides);
    const last = lastLine(state);
    if (last) root.appendChild(last);
  };

  // -- controller

  const chosen = {};  // side -> {colour: value}, kept across re-renders while entering dice

  function dicePicker(side) {
    const values = chosen[side] = chosen[side] || {};
    const box = el("form", {class: "card dice-entry", "data-side": side}, el("h2", {}, tr("set_dice", {side})));
    for (const c of COLOURS) {
      const opts = el("div", {class: "opts"});
      for (let v = 1; v <= 6; v++) {
        const b = el("button", {type: "button", class: "c-" + c, "aria-pressed": values[c] === v ? "true" : "false",
          "data-colour": c, "data-value": v}, v);
        b.addEventListener("click", () => {
          values[c] = v;
          for (const o of opts.children) o.setAttribute("aria-pressed", o === b ? "true" : "false");
        });
        opts.appendChild(b);
      }
      box.appendChild(el("div", {class: "picker"}, el("div", {class: "lab"}, tr("cup_" + c)), opts));
    }
    box.appendChild(el("button", {type: "submit", class: "primary big"}, tr("send")));
    box.addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await C.send({type: "dice", side, values: Object.assign({}, values)});
      if (r.ok) delete chosen[side];
    });
    return box;
  }

  function throwButtons(state) {
    const side = state.to_act[0];
    const d = state.detail.sides[side];
    const legal = new Set((state.legal || []).filter((a) => a.type === "throw").map((a) => a.cup));
    const box = el("div", {class: "card"},
      // a side of one player named as the side: "Ann throws", not "Ann (Ann) throws"
      el("div", {class: "who"}, state.detail.thrower === side ? tr("throw_for_one", {name: side})
        : tr("throw_for", {name: state.detail.thrower, side})));
    const grid = el("div", {class: "throws"});
    for (const c of [...COLOURS, "silver", "miss"]) {
      let sub = "";
      if (COLOURS.includes(c)) sub = tr("worth", {n: d.values[c]}) + " · " + tr("left", {n: d.cups[c]});
      if (c === "silver") sub = tr(d.silver_active ? "silver_on" : "silver_off");
      grid.appendChild(el("button", {type: "button", class: "c-" + c, "data-cup": c, disabled: !legal.has(c),
        onclick: () => C.send({type: "throw", side, cup: c})}, tr("cup_" + c), el("small", {}, sub)));
    }
    box.appendChild(grid);
    return box;
  }

  C.controllers.exact21 = function (state, root) {
    if (state.finished) return;
    const diceFor = (state.legal || []).filter((a) => a.type === "dice").map((a) => a.side);
    if (diceFor.length) { for (const side of diceFor) root.appendChild(dicePicker(side)); return; }
    root.appendChild(C.dock(throwButtons(state)));  // the throws: under the thumb, no scrolling
  };
})();
