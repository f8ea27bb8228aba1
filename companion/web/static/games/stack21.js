// Stack 21: scores (per team in team play) against the target, the round (dealer, upcard,
// stock, whose turn, the card in hand), each player's stacks with their count as a player reads
// it ("7 or 17"), the stacks at a round's end and the round history. The controller deals (by
// hands or a virtual deck the table shuffles), names drawn cards on a card pad, offers keep / give / place /
// take_upcard / combine as taps from the legal actions, and records a round_result.
"use strict";
(function () {
  const {el, tr} = window.C;
  const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10"];

  function cardChip(text) {
    const special = text === "ZB" ? " zb" : text === "I21" ? " i21" : text === "?" ? " unknown" : "";
    const m = /^(A|10|[2-9])(B?)(K?)$/.exec(text);
    const cls = "cardc" + special + (m && m[2] ? " bonus" : "") + (m && m[3] ? " keeper" : "");
    return el("span", {class: cls, "data-card": text, title: text}, text);
  }

  // A count as a player reads it in the page's language: the engine's "7 or 17" (an Ace counts
  // 1 or 11) with the page's own word between the counts ("7 vagy 17", "7 o 17").
  const countText = (count) => String(count ?? "").split(/\s+or\s+/).join(" " + tr("s21_or") + " ");

  const stateBadge = (s) => (s === "bust" ? el("span", {class: "badge bad"}, tr("s21_bust")) : null);

  function stackRow(s) {
    return el("div", {class: "s21-stack s21-" + (s.state === "21" ? "made" : s.state), "data-stack-id": s.id},
      el("span", {class: "sid"}, s.id),
      el("div", {class: "cards"}, ...s.cards.map(cardChip)),
      el("span", {class: "count", "data-count": s.id}, s.state === "21" ? "21 ✓" : countText(s.count)),
      stateBadge(s.state));
  }

  function unitOf(d, player) {
    if (!d.teams) return player;
    for (const [team, members] of Object.entries(d.teams)) if (members.includes(player)) return team;
    return player;
  }

  function scoresCard(state) {
    const d = state.detail;
    const grid = el("div", {class: "players-grid s21-scores"});
    for (const u of state.players) {
      const members = d.teams && d.teams[u];
      grid.appendChild(el("div", {class: "player" + ((state.to_act || []).includes(u) && !state.finished ? " on-turn" : "")
        + ((state.winners || []).includes(u) ? " won" : ""), "data-unit": u},
        el("div", {class: "name", title: members ? members.join(" + ") : u}, members ? members.join(" + ") : u),
        el("div", {class: "big-num", "data-score": u}, (state.scores || {})[u] ?? 0),
        el("div", {class: "dim"}, tr("s21_of_target", {n: d.target}))));
    }
    return grid;
  }

  function roundCard(state) {
    const d = state.detail;
    const card = el("div", {class: "card s21-round"});
    if (d.phase === "deal") {
      card.appendChild(el("div", {class: "x-now"}, tr("s21_deals", {name: d.next_dealer || tr("s21_anyone")})));
      if (d.lead_tied) card.appendChild(el("div", {class: "dim"}, tr("s21_lead_tied")));
      return card;
    }
    card.appendChild(el("div", {class: "dim"}, tr("round", {n: d.round}), " · ", tr("s21_dealer", {name: d.dealer}),
      d.stock_size === null || d.stock_size === undefined ? "" : " · " + tr("s21_stock", {n: d.stock_size})));
    const row = el("div", {class: "s21-up"});
    row.appendChild(el("div", {class: "s21-upcard"}, el("div", {class: "dim"}, tr("s21_upcard")),
      d.upcard ? cardChip(d.upcard) : el("span", {class: "dim"}, "–")));
    if (d.hand) row.appendChild(el("div", {class: "s21-upcard"}, el("div", {class: "dim"},
      d.hand.refused_by ? tr("s21_refused_by", {name: d.hand.refused_by}) : tr("s21_in_hand", {name: d.hand.player})),
      cardChip(d.hand.card)));
    card.appendChild(row);
    let now = tr("s21_turn_of", {name: d.to_act_player});
    if (d.playing_out) now = tr("s21_playing_out", {name: d.playing_out});
    else if (d.first_turn) now += " · " + tr("s21_first_turn");
    card.appendChild(el("div", {class: "x-now", "data-turn": d.to_act_player}, now));
    return card;
  }

  function lastLine(state) {
    const last = state.detail.last;
    if (!last) return null;
    const vars = Object.assign({}, last, {name: last.player});
    const key = {draw: "s21_last_draw", keep: "s21_last_keep", place: "s21_last_place",
      give: last.result === "refused" ? "s21_last_refused" : "s21_last_give",
      take_upcard: "s21_last_take", combine: "s21_last_combine", deal: "s21_last_deal"}[last.type];
    let text = key ? tr(key, Object.assign(vars, {stacks: (last.stacks || []).join(" + "), name: last.player || last.dealer})) : "";
    if (text && last.state === "21") text += " → 21!";
    else if (text && last.state === "bust") text += " → " + tr("s21_bust");
    if (last.round_end) text += (text ? " · " : "") + tr("s21_round_over", {n: last.round_end.round});
    return text ? el("div", {class: "last", "data-last": last.type}, text) : null;
  }

  function stacksGrid(state, stacks, points) {
    const d = state.detail;
    const grid = el("div", {class: "s21-players"});
    for (const [player, list] of Object.entries(stacks)) {
      const onTurn = !state.finished && d.phase !== "deal" && d.to_act_player === player;
      const card = el("div", {class: "stack s21-player" + (onTurn ? " on-turn" : ""), "data-player": player},
        el("div", {class: "name", title: player}, player, d.teams ? el("span", {class: "dim"}, " · " + C.unitName(state, unitOf(d, player))) : null,
          (d.combined || []).includes(player) && !points ? el("span", {class: "dim"}, " · " + tr("s21_combined")) : null,
          points ? el("span", {class: "pts", "data-points": player}, "+" + (points[player] ?? 0)) : null));
      for (const s of list) card.appendChild(stackRow(s));
      grid.appendChild(card);
    }
    return grid;
  }

  function historyTable(state) {
    const d = state.detail;
    const rounds = d.history || [];
    if (!rounds.length) return null;
    const units = state.players;
    const table = el("table", {class: "s21-history"},
      el("tr", {}, el("th", {}, "#"), ...units.map((u) => el("th", {title: C.unitName(state, u)}, C.unitName(state, u)))));
    for (const r of rounds) {
      const pts = r.team_points || r.points || {};
      table.appendChild(el("tr", {"data-round": r.round}, el("td", {}, r.round + (r.void ? " ∅" : "")),
        ...units.map((u) => el("td", {}, el("b", {}, "+" + (pts[u] ?? 0)), el("span", {class: "dim"}, " " + ((r.scores || {})[u] ?? ""))))));
    }
    return el("div", {class: "card"}, el("b", {}, tr("round_history")), table);
  }

  C.scoreboards.stack21 = function (state, root) {
    const d = state.detail || {};
    root.appendChild(scoresCard(state));
    if (!state.finished) root.appendChild(roundCard(state));
    const last = lastLine(state);
    if (last) root.appendChild(last);
    const ended = (d.history || [])[d.history.length - 1];
    if (Object.keys(d.stacks || {}).length) root.appendChild(stacksGrid(state, d.stacks, null));
    else if (ended && ended.stacks) {
      root.appendChild(el("h3", {}, tr("s21_round_end", {n: ended.round}) + (ended.void ? " · " + tr("s21_void") : "")));
      root.appendChild(stacksGrid(state, ended.stacks, ended.points));
    }
    const history = historyTable(state);
    if (history) root.appendChild(history);
  };

  // -- controller

  const pads = {};  // pad key -> {rank, bonus, keeper}

  // A card pad: rank (or ZB / I21), B and K toggles, then the action's own button.
  function cardPad(key, title, submitText, onCard) {
    const pick = pads[key] = pads[key] || {rank: null, bonus: false, keeper: false};
    const text = () => (!pick.rank ? "" : pick.rank === "ZB" || pick.rank === "I21" ? pick.rank
      : pick.rank + (pick.bonus ? "B" : "") + (pick.keeper ? "K" : ""));
    const preview = el("span", {class: "s21-preview"});
    const form = el("form", {class: "card s21-pad", "data-pad": key}, el("div", {class: "who"}, title));
    const send = el("button", {type: "submit", class: "primary big"});
    function refresh() {
      preview.replaceChildren(text() ? cardChip(text()) : el("span", {class: "dim"}, "?"));
      send.textContent = submitText + (text() ? " " + text() : "");
      send.disabled = !text();
      for (const b of form.querySelectorAll("button[data-rank]")) b.setAttribute("aria-pressed", b.dataset.rank === pick.rank ? "true" : "false");
      for (const b of form.querySelectorAll("button[data-mod]")) b.setAttribute("aria-pressed", pick[b.dataset.mod] ? "true" : "false");
    }
    const ranks = el("div", {class: "s21-ranks"});
    for (const r of [...RANKS, "ZB", "I21"])
      ranks.appendChild(el("button", {type: "button", "data-rank": r, onclick: () => { pick.rank = r; refresh(); }}, r));
    const mods = el("div", {class: "s21-mods"},
      el("button", {type: "button", "data-mod": "bonus", onclick: () => { pick.bonus = !pick.bonus; refresh(); }}, "B · " + tr("s21_bonus")),
      el("button", {type: "button", "data-mod": "keeper", onclick: () => { pick.keeper = !pick.keeper; refresh(); }}, "K · " + tr("s21_keeper")),
      preview);
    form.append(ranks, mods, send);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await onCard(text());
      if (r && r.ok) delete pads[key];
    });
    refresh();
    return form;
  }

  const cardsOf = (text) => text.split(/[\s,;]+/).map((s) => s.trim().toUpperCase()).filter(Boolean);

  function dealCard(state) {
    const d = state.detail;
    const dealer = d.next_dealer || state.detail.to_act_player || null;
    const dealerPick = dealer ? null : el("select", {name: "dealer"}, ...allPlayers(state).map((p, i, all) => el("option", {value: p, selected: i === all.length - 1}, p)));
    const who = () => dealer || dealerPick.value;
    // the deal of a virtual deck, a round's first tap, sits in the dock under the thumb; dealing
    // by typed hands (a table with its own cards) stays in the page
    const dock = C.dock(el("div", {class: "card s21-deal"}, el("div", {class: "who"}, tr("s21_deal_title", {n: d.round + 1})),
      dealerPick ? el("label", {}, tr("s21_dealer_pick"), dealerPick) : el("div", {class: "dim"}, tr("s21_dealer", {name: dealer})),
      el("button", {type: "button", class: "primary big", "data-virtual-deal": "1",
        // no seed: the table draws it, so that no phone knows the stock (EVENTS.md, deal.seed)
        onclick: () => C.send({type: "deal", dealer: who()})}, tr("s21_virtual_deal"))));
    const form = el("form", {class: "s21-hands"});
    for (const p of allPlayers(state))
      form.appendChild(el("label", {}, tr("s21_hand_of", {name: p}), el("input", {name: "hand_" + p, autocapitalize: "characters",
        autocomplete: "off", placeholder: "7 10B A 5K"})));
    form.appendChild(el("label", {}, tr("s21_upcard"), el("input", {name: "upcard", autocapitalize: "characters", autocomplete: "off", placeholder: "9"})));
    form.appendChild(el("label", {}, tr("s21_stock_opt"), el("textarea", {name: "stock", rows: 2, placeholder: "4 6 10 …"})));
    form.appendChild(el("button", {type: "submit", class: "primary"}, tr("s21_deal_send")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const f = form.elements;
      const event = {type: "deal", dealer: who(), hands: {}, upcard: f.upcard.value.trim().toUpperCase()};
      for (const p of allPlayers(state)) event.hands[p] = cardsOf(f["hand_" + p].value);
      if (f.stock.value.trim()) event.stock = cardsOf(f.stock.value);
      C.send(event);
    });
    return [el("details", {class: "card s21-more s21-deal-hands"}, el("summary", {}, tr("s21_deal_hands")), form), dock];
  }

  // Every player in seat order (with teams, ``players`` are the teams: seats 1+3 and 2+4).
  function allPlayers(state) {
    const teams = Object.values(state.detail.teams || {});
    return teams.length === 2 ? [teams[0][0], teams[1][0], teams[0][1], teams[1][1]] : state.players;
  }

  function roundResultCard(state) {
    const form = el("form", {class: "s21-result"}, el("div", {class: "dim"}, tr("s21_result_hint")));
    for (const p of allPlayers(state))
      form.appendChild(el("label", {}, p, el("input", {name: "stacks_" + p, autocapitalize: "characters", autocomplete: "off",
        placeholder: "10 A / 10 5B 6 / 9 8B 7 / 7B 7B 7"})));
    form.appendChild(el("label", {class: "check"}, el("input", {type: "checkbox", name: "exhausted"}), tr("s21_exhausted")));
    form.appendChild(el("button", {type: "submit", class: "primary"}, tr("s21_result_send")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const f = form.elements;
      const event = {type: "round_result", stacks: {}};
      const dealer = state.detail.next_dealer;
      if (dealer) event.dealer = dealer;
      for (const p of allPlayers(state))
        event.stacks[p] = f["stacks_" + p].value.split(/[/|\n]/).map(cardsOf).filter((s) => s.length);
      if (f.exhausted.checked) event.stock_exhausted = true;
      C.send(event);
    });
    return el("details", {class: "card s21-more"}, el("summary", {}, tr("s21_result_title")), form);
  }

  function stackOf(state, player, id) {
    return ((state.detail.stacks || {})[player] || []).find((s) => s.id === id);
  }

  function stackButton(state, action, owner, label) {
    const s = stackOf(state, owner, action.stack);
    return el("button", {type: "button", class: "s21-btn", "data-action": action.type,
      "data-target": (action.to || owner) + ":" + action.stack, onclick: () => C.send(action)},
      el("b", {}, label), el("span", {class: "cards"}, ...(s ? s.cards.map(cardChip) : [])),
      el("small", {}, s ? countText(s.count) : ""));
  }

  // A turn's moves (the heading with the card in hand, the draw, keep / place / give, take the
  // upcard / combine) go in the dock, under the thumb; naming the upcard and an empty stock,
  // rare, stay in the page (``root``).
  function turnControls(state, root) {
    const d = state.detail;
    const page = root;
    root = C.dock();
    const player = d.to_act_player;
    const legal = state.legal || [];
    const of = (type) => legal.filter((a) => a.type === type);
    // S4 first turn and S11 playing out: keep only, so the heading does not offer a give
    const canGive = of("give").length > 0;
    const head = el("div", {class: "card"}, el("div", {class: "who"}, d.hand
      ? tr(d.hand.refused_by ? "s21_place_for" : canGive ? "s21_keep_or_give" : "s21_keep_only", {name: player, by: d.hand.refused_by || ""})
      : tr("s21_turn_of", {name: player}) + (d.first_turn ? " · " + tr("s21_first_turn") : "")));
    if (d.hand) head.appendChild(el("div", {class: "s21-up"}, cardChip(d.hand.card)));
    root.appendChild(head);

    // A stock the companion holds (a virtual deck, or dealt with its stock typed in) is drawn by
    // one tap: the server takes its top card, which the phones are never sent. Only a card the
    // companion cannot know (the table's own deck) is named on the card pad.
    const stockKnown = d.stock_size !== null && d.stock_size !== undefined;
    for (const a of of("draw")) {
      if (a.card !== undefined || (a.from !== "upcard" && stockKnown)) root.appendChild(el("button", {type: "button", class: "big" + (a.from === "upcard" ? "" : " primary"), "data-action": "draw",
        "data-from": a.from || "stock", onclick: () => C.send(a)},
        // the stock's top card stays hidden until drawn; the upcard is face up anyway
        a.from === "upcard" ? tr("s21_draw_upcard", {card: a.card}) : tr("s21_draw_hidden")));
      else root.appendChild(cardPad("draw|" + (a.from || "stock") + "|" + d.round, tr(a.from === "upcard" ? "s21_name_upcard_draw" : "s21_name_draw", {name: player}),
        tr("s21_draw"), (card) => C.send(Object.assign({}, a, {card}))));
    }
    const onOwn = [...of("keep"), ...of("place")];
    if (onOwn.length) {
      const box = el("div", {class: "card"}, el("b", {}, tr(onOwn[0].type === "place" ? "s21_place" : "s21_keep")));
      const grid = el("div", {class: "s21-grid"});
      for (const a of onOwn) grid.appendChild(stackButton(state, a, player, tr("s21_stack_n", {n: a.stack})));
      box.appendChild(grid);
      root.appendChild(box);
    }
    const gives = of("give");
    if (gives.length) {
      const box = el("div", {class: "card"}, el("b", {}, tr("s21_give")));
      for (const to of [...new Set(gives.map((a) => a.to))]) {
        const grid = el("div", {class: "s21-grid"});
        for (const a of gives.filter((g) => g.to === to)) grid.appendChild(stackButton(state, a, to, to + " · " + a.stack));
        box.appendChild(grid);
      }
      root.appendChild(box);
    }
    const takes = of("take_upcard");
    const combines = of("combine");
    if (takes.length || combines.length) {
      const box = el("div", {class: "card"}, el("b", {}, tr("s21_instead")));
      const grid = el("div", {class: "s21-grid"});
      for (const a of takes) {
        if (a.card === undefined && d.upcard === "?") continue;
        grid.appendChild(stackButton(state, a, player, tr("s21_take_upcard", {card: d.upcard, n: a.stack})));
      }
      for (const a of combines) grid.appendChild(el("button", {type: "button", class: "s21-btn", "data-action": "combine",
        "data-target": a.stacks.join("+"), onclick: () => C.send(a)}, el("b", {}, tr("s21_combine", {a: a.stacks[0], b: a.stacks[1]})),
        el("small", {}, a.stacks.map((id) => countText((stackOf(state, player, id) || {}).count)).join(" + "))));
      box.appendChild(grid);
      root.appendChild(box);
    }
    if (of("upcard").length) page.appendChild(cardPad("upcard|" + d.round, tr("s21_name_upcard"), tr("s21_upcard"),
      (card) => C.send({type: "upcard", card})));
    if (of("stock_empty").length) page.appendChild(el("button", {type: "button", class: "big", "data-action": "stock_empty",
      onclick: () => C.send({type: "stock_empty"})}, tr("s21_stock_empty")));
    if (root.children.length) page.appendChild(root);
  }

  C.controllers.stack21 = function (state, root) {
    if (state.finished) return;
    const d = state.detail || {};
    if (d.phase === "deal") {
      const [byHands, dock] = dealCard(state);
      root.append(byHands, roundResultCard(state), dock);
      return;
    }
    turnControls(state, root);
  };
})();
