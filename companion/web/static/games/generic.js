// Any game, before (or beside) its own page: players and scores, who acts, and the engine's
// legal actions as buttons; templates (a value the table supplies) get a small form.
"use strict";
(function () {
  const {el, tr} = window.C;

  C.scoreboards.generic = function (state, root) {
    const grid = el("div", {class: "players-grid"});
    for (const p of state.players || []) {
      const score = (state.scores || {})[p];
      grid.appendChild(el("div", {class: "player" + ((state.to_act || []).includes(p) ? " on-turn" : "")
        + ((state.winners || []).includes(p) ? " won" : "")},
        el("div", {class: "name", title: p}, p),
        el("div", {class: "big-num"}, score === undefined ? "–" : score)));
    }
    root.appendChild(grid);
  };

  function fieldsOf(type) {
    const all = (window.EVENT_FIELDS || {})[C.game] || {};
    return all[type] || null;
  }

  function inputFor(name, kind) {
    if (kind === "int") return el("input", {name, type: "number", inputmode: "numeric", required: true});
    if (kind === "dict" || kind === "list") return el("textarea", {name, rows: 2, placeholder: kind === "dict" ? "{…}" : "[…]", required: true});
    if (kind === "bool") return el("input", {name, type: "checkbox"});
    return el("input", {name, required: true});
  }

  function readInput(input, kind) {
    if (kind === "int") return parseInt(input.value, 10);
    if (kind === "float") return parseFloat(input.value);
    if (kind === "bool") return input.checked;
    if (kind === "dict" || kind === "list") return JSON.parse(input.value);
    return input.value;
  }

  // An action as a player reads it: the catalogue's name for its kind and its values in the
  // page's words ("Throw: A · yellow", "Dobás: A · sárga"); never the event's English type and
  // field names. A kind the catalogue does not name (a game newer than it) keeps its type.
  C.actionText = function (action) {
    const kind = C.t["ev_" + action.type] !== undefined ? tr("ev_" + action.type) : String(action.type);
    const values = C.eventValues(action).map(C.valueText).filter((text) => text !== "");
    return values.length ? kind + ": " + values.join(" · ") : kind;
  };
  const fieldName = (name) => (C.t["field_" + name] !== undefined ? tr("field_" + name) : name);

  // One button per complete legal action; a form per template (fields the table must supply).
  C.actionList = function (state) {
    const box = el("div", {class: "actions"});
    for (const action of state.legal || []) {
      const spec = fieldsOf(action.type);
      const missing = spec ? Object.entries(spec).filter(([k, f]) => f.required && !(k in action)) : [];
      if (!missing.length) {
        box.appendChild(el("button", {type: "button", onclick: () => C.send(action)}, C.actionText(action)));
        continue;
      }
      const form = el("form", {}, el("div", {}, el("b", {}, C.actionText(action))));
      for (const [name, f] of missing) form.appendChild(el("label", {}, fieldName(name), inputFor(name, f.kind)));
      form.appendChild(el("button", {type: "submit", class: "primary"}, tr("send")));
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const event = Object.assign({}, action);
        try {
          for (const [name, f] of missing) event[name] = readInput(form.elements[name], f.kind);
        } catch (err) { C.toast(String(err.message || err)); return; }
        C.send(event);
      });
      box.appendChild(form);
    }
    return box;
  };

  // Any event as JSON: the last resort, so every game can be played from a phone; a game with a
  // controller of its own keeps it closed at the foot of the page, for developers.
  C.rawEvent = function (state) {
    const first = (state.legal || [])[0];
    const area = el("textarea", {rows: 3, name: "event"});
    area.value = JSON.stringify(first || {type: ""});
    const form = el("form", {class: "raw"}, el("label", {}, "JSON", area),
      el("button", {type: "submit"}, tr("send")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      let event;
      try { event = JSON.parse(area.value); } catch (err) { C.toast("JSON: " + err.message); return; }
      C.send(event);
    });
    return el("details", {class: "dev"}, el("summary", {}, tr("dev_event")), form);
  };

  C.controllers.generic = function (state, root) {
    root.appendChild(el("h2", {}, tr("actions")));
    root.appendChild(C.actionList(state));
    root.appendChild(C.rawEvent(state));
  };
})();
