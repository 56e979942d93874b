"use strict";
// The play page: draws each frame the server sends, and sends the keyboard or a gamepad as a raw controller
// frame (libmelee's ControllerState meaning: sticks in [0, 1], 0.5 neutral) on every change and every
// animation frame. window.playStats keeps what tests and the latency measurement read (docs/play.md).

const S = window.SETTINGS;
const me = S.human === "fox" ? 0 : 1;
const labels = me === 0 ? ["you", S.opponent] : [S.opponent, "you"];
const canvas = document.getElementById("game");
const draw = makePainter(canvas, S.geometry, labels);
const place = S.geometry.stage === "final_destination" ? "" : ` · ${S.geometry.stages[S.geometry.stage].title}`;
const title = `arena · fight${place} · you play ${S.human === "fox" ? "Fox" : "Marth"} · delay ${S.delay_frames} frames`;
const stats = window.playStats = { frames: 0, lastFrame: -1, firstAt: null, lastAt: null, latencies: [],
                                   over: false, result: null, errors: [], sent: 0 };

const TILT = 0.3;  // Shift: the stick pushed 0.6 of the way (a walk, a tilt), as (v - 0.5) x 2 reads it
const keys = new Set();
const MAIN = { ArrowLeft: [-1, 0], KeyA: [-1, 0], ArrowRight: [1, 0], KeyD: [1, 0], ArrowUp: [0, 1], KeyW: [0, 1],
               ArrowDown: [0, -1], KeyS: [0, -1] };
const CSTICK = { KeyF: [-1, 0], KeyH: [1, 0], KeyT: [0, 1], KeyG: [0, -1] };
const BUTTON = { KeyJ: "a", KeyK: "b", KeyL: "x", Space: "y", KeyI: "z", KeyU: "r_button", KeyO: "l_button" };
let ws = null, seq = 0, lastSent = "";
const pending = [];  // presses waiting for the frame that shows them: {seq, t}

function dir(map) {
  let x = 0, y = 0;
  for (const k of keys) if (map[k]) { x += map[k][0]; y += map[k][1]; }
  return [Math.max(-1, Math.min(1, x)), Math.max(-1, Math.min(1, y))];
}

function padNow() {
  const half = keys.has("ShiftLeft") || keys.has("ShiftRight") ? TILT : 0.5;
  const [mx, my] = dir(MAIN), [cx, cy] = dir(CSTICK);
  const p = { main_x: 0.5 + mx * half, main_y: 0.5 + my * half, c_x: 0.5 + cx * 0.5, c_y: 0.5 + cy * 0.5, l: 0, r: 0,
              a: false, b: false, x: false, y: false, z: false, l_button: false, r_button: false };
  for (const k of keys) if (BUTTON[k]) p[BUTTON[k]] = true;
  for (const gp of navigator.getGamepads ? navigator.getGamepads() : []) {
    if (!gp || gp.mapping !== "standard") continue;
    const ax = (i) => (Math.abs(gp.axes[i] || 0) > 0.1 ? gp.axes[i] : 0);
    if (ax(0) || ax(1)) { p.main_x = 0.5 + ax(0) / 2; p.main_y = 0.5 - ax(1) / 2; }  // the browser's y points down
    if (ax(2) || ax(3)) { p.c_x = 0.5 + ax(2) / 2; p.c_y = 0.5 - ax(3) / 2; }
    const b = (i) => !!(gp.buttons[i] && gp.buttons[i].pressed);
    p.a ||= b(0); p.b ||= b(1); p.x ||= b(2); p.y ||= b(3); p.z ||= b(5);
    p.l = Math.max(p.l, gp.buttons[6] ? gp.buttons[6].value : 0); p.r = Math.max(p.r, gp.buttons[7] ? gp.buttons[7].value : 0);
    for (const k of ["main_x", "main_y", "c_x", "c_y"]) p[k] = Math.max(0, Math.min(1, p[k]));
  }
  return p;
}

function send(force) {
  if (!ws || ws.readyState !== 1) return null;
  const p = padNow(), text = JSON.stringify(p);
  if (!force && text === lastSent) return null;
  lastSent = text;
  p.seq = seq++;
  ws.send(JSON.stringify(p));
  stats.sent = seq;
  return p.seq;
}

function onKey(e, down) {
  if (e.code === "Enter" && down && stats.over) { rematch(); return; }
  if (!(e.code in MAIN || e.code in CSTICK || e.code in BUTTON || e.code.startsWith("Shift"))) return;
  e.preventDefault();
  if (down === keys.has(e.code)) return;  // a held key's repeats change nothing
  const t = performance.now();
  down ? keys.add(e.code) : keys.delete(e.code);
  const s = send(false);
  if (s !== null && down) pending.push({ seq: s, t, key: e.code, frameAtPress: stats.lastFrame });
}
addEventListener("keydown", (e) => onKey(e, true));
addEventListener("keyup", (e) => onKey(e, false));
addEventListener("blur", () => { keys.clear(); send(false); });

function onMessage(m) {
  if (m.type === "error") { stats.errors.push(m.error); return; }
  if (m.type !== "frame") return;
  const now = performance.now();
  draw(m, title);
  stats.frames += 1; stats.lastFrame = m.frame; stats.lastAt = now;
  if (stats.firstAt === null) stats.firstAt = now;
  while (pending.length && m.seq >= pending[0].seq) {  // the game read this press on the frame just drawn
    const p = pending.shift(), done = performance.now();
    // ms: from the key's event to this frame drawn; frames: game frames from the newest one drawn at the
    // press to the one that shows it (the delay, plus the frame that reads it, plus any in flight).
    stats.latencies.push({ seq: p.seq, key: p.key, ms: done - p.t, frame: m.frame, frames: m.frame - p.frameAtPress });
  }
  stats.over = m.over; stats.result = m.result;
  if (m.over) showResult(m);
  const kind = m.frame_kind === "compiling" ? " · compiling the arena's frame: slower than 60 frames/s until ready"
    : m.frame_kind && m.frame_kind.startsWith("eager (") ? ` · ${m.frame_kind}` : "";
  document.getElementById("status").textContent = `frame ${m.frame} · sent ${stats.sent} controller frames${kind}`;
}

function showResult(m) {
  const r = m.result, box = document.getElementById("result");
  document.getElementById("winner").textContent = { you: "You win", opponent: "You lose", draw: "Draw" }[r.winner];
  document.getElementById("score").textContent =
    `Fox ${r.stocks[0]} stocks ${r.percent[0]}% · Marth ${r.stocks[1]} stocks ${r.percent[1]}% · ${clockText(r.frames)}`;
  document.getElementById("saved").textContent = "";
  box.style.display = "flex";
  showSaved(10);
}

async function showSaved(tries) {  // the game's files are written beside the clock: ask until they are there
  const s = await (await fetch("/v1/state")).json();
  const mine = s.saved.filter((p) => p.includes(`-g${String(s.games).padStart(3, "0")}`));
  if (mine.length) document.getElementById("saved").textContent = `saved: ${mine.join(", ")}`;
  else if (tries > 0 && stats.over) setTimeout(() => showSaved(tries - 1), 500);
}

async function rematch() {
  document.getElementById("result").style.display = "none";
  stats.over = false; stats.result = null;
  await fetch("/v1/rematch", { method: "POST" });
}
document.getElementById("rematch").onclick = rematch;
document.getElementById("save").onclick = async () => {
  const r = await fetch("/v1/save", { method: "POST" });
  const j = await r.json();
  document.getElementById("saved").textContent = r.ok ? `saved: ${j.saved}` : j.detail;
};

function everyFrame() { send(false); requestAnimationFrame(everyFrame); }  // the gamepad, polled each frame
connect(onMessage, (socket) => { ws = socket; send(true); });
requestAnimationFrame(everyFrame);
canvas.focus();
