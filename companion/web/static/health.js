// The camera page: the camera's state in the phone's language (not the health's JSON), its
// latest picture, the button and buzzer, the open scoreboards; a camera whose exposure and white
// balance are held can be asked to measure them again (POST /api/camera/remeasure, with the PIN). Without a camera it asks for no
// picture at all and reads the health every 10 s; a picture that does not come is asked for
// again later and later (2 s doubling to 30 s), never every 2 s.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const {el, tr} = window.C;
  const box = document.getElementById("health");
  const frame = document.getElementById("frame");
  const remeasure = document.getElementById("remeasure");
  const EVERY_MS = 2000, IDLE_MS = 10000, MAX_WAIT_MS = 30000;
  let frameWait = EVERY_MS, nextFrame = 0, loading = false, timer = null;

  frame.alt = tr("cam_frame_alt");
  frame.addEventListener("load", () => { loading = false; frameWait = EVERY_MS; frame.hidden = false; });
  frame.addEventListener("error", () => {  // no picture (yet): ask again later, and later
    loading = false;
    frameWait = Math.min(MAX_WAIT_MS, frameWait * 2);
    nextFrame = Date.now() + frameWait;
  });

  // What the health calls the camera, whichever service answers (a table without a camera loop
  // says {configured: false}; the live loop's own answer holds the camera's).
  function cameraOf(data) {
    const loop = data.camera || {};
    if (loop.configured === false) return {none: true};
    const cam = loop.camera || {};
    if (cam.state === "none") return {none: true};
    return {loop, cam};
  }

  function stateText(cam, loop) {
    const fps = typeof cam.fps === "number" ? cam.fps : loop.fps;
    switch (cam.state) {
      case "ok": return cam.frames ? tr("cam_ok", {fps: (fps || 0).toLocaleString(C.lang, {maximumFractionDigits: 1})}) : tr("cam_ok_waiting");
      case "retrying": return tr("cam_retrying");
      case "stalled": return tr("cam_stalled");
      case "closed": return tr("cam_closed");
      case "ended": return tr("cam_ended");
      default: return cam.status || cam.state || "";
    }
  }

  // Exposure and white balance: measuring, held (since when), or automatic; null for a camera
  // without such controls (a video, the rendered table) or with every value fixed.
  function controlsText(cam) {
    const state = cam.controls_state;
    if (!state) return null;
    if (state === "locked") {
      const at = typeof cam.controls_held_at === "number" ? new Date(cam.controls_held_at * 1000) : null;
      return tr("cam_controls_locked", {time: at ? at.toLocaleTimeString(C.lang) : "?"});
    }
    return tr("cam_controls_" + (state === "measuring" || state === "failed" ? state : "auto"));
  }

  function stages(loop) {
    const parts = [];
    for (const [name, s] of Object.entries(loop.stages || {}))
      if (s && typeof s.median_ms === "number") parts.push(name + " " + Math.round(s.median_ms) + " ms");
    return parts.join(" · ");
  }

  function show(data) {
    const found = cameraOf(data);
    const rows = [];
    if (found.none) rows.push(["status", tr("cam_status"), tr("no_camera")]);
    else {
      const {loop, cam} = found;
      rows.push(["status", tr("cam_status"), stateText(cam, loop)]);
      if (cam.source) rows.push(["source", tr("cam_source"), cam.source]);
      rows.push(["frames", tr("cam_frames"), tr("cam_frames_value", {n: cam.frames || 0, bad: cam.bad_frames || 0})]);
      const times = stages(loop);
      if (times) rows.push(["stages", tr("cam_stages"), times]);
      const controls = controlsText(cam);
      if (controls) rows.push(["controls", tr("cam_controls"), controls]);
      if (typeof loop.proposed === "number") rows.push(["proposed", tr("cam_proposed"), loop.proposed]);
      if (cam.last_error) rows.push(["error", tr("cam_last_error"), cam.last_error]);  // the device's own words
      if (loop.panel) rows.push(["panel", tr("cam_panel"), loop.panel.kind === "null" ? tr("cam_panel_none") : tr("cam_panel_on")]);
    }
    rows.push(["streams", tr("cam_phones"), data.streams]);
    box.replaceChildren(...rows.flatMap(([key, label, value]) => [el("dt", {"data-key": key}, label), el("dd", {"data-key": key}, value)]));
    box.dataset.camera = found.none ? "none" : found.cam.state || "";
    // measuring again means something only to a camera that holds what it measured
    remeasure.hidden = found.none || !["measuring", "locked", "failed"].includes(found.cam.controls_state);
    return found;
  }

  function askFrame(found) {
    // only a camera that says it is sending pictures, once the loop holds one (the camera counts a
    // picture before the loop has kept it), is asked for one, and only one at a time
    if (found.none || found.cam.state !== "ok" || !(found.loop.frames > 0) || loading || Date.now() < nextFrame) return;
    loading = true;
    nextFrame = Date.now() + frameWait;
    frame.src = "/api/frame.jpg?t=" + Date.now();
  }

  // the PIN field beside the button, shown once the table refuses (as beside Rematch and Resume)
  const pin = C.pinRow(false);
  remeasure.parentElement.after(pin.row);
  remeasure.addEventListener("click", async () => {
    if (!window.confirm(tr("remeasure_confirm"))) { C.toast(tr("remeasure_kept"), true); return; }
    pin.take();
    const r = await C.api("POST", "/api/camera/remeasure");
    if (r.ok) { pin.row.hidden = true; C.toast(tr("remeasure_asked"), true); }
    else if (C.pinRefused(r)) pin.ask(r);
    else C.toast(tr("error") + ": " + C.refusal(r.data));
  });

  async function refresh() {
    const r = await C.api("GET", "/api/health");
    let wait = EVERY_MS;
    if (r.ok) {
      const found = show(r.data);
      askFrame(found);
      if (found.none) { wait = IDLE_MS; frame.hidden = true; }
    }
    timer = setTimeout(refresh, wait);
  }
  document.getElementById("conn").dataset.state = "on";
  refresh();
  window.addEventListener("pagehide", () => clearTimeout(timer));
});
