// Camera health (issue 8 plugs in a camera; without one: "no camera configured").
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const {el, tr} = window.C;
  const box = document.getElementById("health");
  const frame = document.getElementById("frame");
  async function refresh() {
    const r = await C.api("GET", "/api/health");
    if (!r.ok) return;
    const cam = r.data.camera || {};
    const rows = [[tr("camera"), cam.configured === false ? tr("no_camera") : ""], [tr("streams", {n: r.data.streams}), ""]];
    for (const [k, v] of Object.entries(cam)) if (k !== "configured" && k !== "message") rows.push([k, typeof v === "object" ? JSON.stringify(v) : v]);
    box.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
    if (cam.configured !== false) { frame.hidden = false; frame.src = "/api/frame.jpg?t=" + Date.now(); }
  }
  document.getElementById("conn").dataset.state = "on";
  refresh();
  setInterval(refresh, 2000);
});
