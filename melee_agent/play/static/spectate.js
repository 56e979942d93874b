"use strict";
// The spectate page: the run's newest model against the CPU, frame by frame, its version above the game (it
// changes as the run publishes), and the run's periodic checks as a curve beside it.
// window.spectateStats keeps what tests read: the version shown and when each version first appeared.

const S = window.SETTINGS;
const stats = window.spectateStats = { modelVersion: null, frames: 0, seen: [] };
let draw = null, drawnStage = null;
const labels = ["model", `CPU level ${S.cpu_level}`];  // the painter reads them at each frame
document.getElementById("run").textContent = `run ${S.run_dir} · CPU level ${S.cpu_level}`;

function plotCurve(curve) {
  const tag = curve["eval/win_rate"] ? "eval/win_rate" : (curve["eval/untouched_share"] ? "eval/untouched_share" : null);
  const c = document.getElementById("curve"), g = c.getContext("2d");
  const C = S.geometry.colors;
  g.fillStyle = C.hud; g.fillRect(0, 0, c.width, c.height);
  if (!tag) return;
  document.getElementById("tag").textContent = tag;
  const pts = curve[tag], pad = 30;
  const maxStep = Math.max(1, ...pts.map((p) => p[0]));
  const X = (s) => pad + (c.width - 2 * pad) * s / maxStep, Y = (v) => c.height - pad - (c.height - 2 * pad) * v;
  g.strokeStyle = C.dim; g.lineWidth = 1; g.strokeRect(pad, pad, c.width - 2 * pad, c.height - 2 * pad);
  g.fillStyle = C.dim; g.font = "11px sans-serif"; g.fillText("1", 8, pad + 4); g.fillText("0", 8, c.height - pad);
  g.fillText(`train step ${maxStep}`, c.width - pad - 90, c.height - 10);
  g.strokeStyle = C.fox; g.lineWidth = 2; g.beginPath();
  pts.forEach(([s, v], i) => (i ? g.lineTo(X(s), Y(v)) : g.moveTo(X(s), Y(v))));
  g.stroke();
  g.fillStyle = C.fox; for (const [s, v] of pts) { g.beginPath(); g.arc(X(s), Y(v), 3, 0, 2 * Math.PI); g.fill(); }
}

function onMessage(m) {
  if (m.curve) plotCurve(m.curve);
  if (m.model_version !== null && m.model_version !== stats.modelVersion) {
    stats.modelVersion = m.model_version;
    stats.seen.push({ version: m.model_version, at: Date.now() });
    document.getElementById("model").textContent = `model v${m.model_version} (${m.action_set})`;
  }
  if (m.type !== "frame") return;
  labels[0] = `model v${m.model_version}`;
  if (!draw || m.stage !== drawnStage) {  // the model's stage: drawn anew if a model of another one takes over
    draw = makePainter(document.getElementById("game"), S.geometry, labels, m.stage);
    drawnStage = m.stage;
  }
  draw(m, `arena · ${m.game} · model v${m.model_version} · game ${m.games + 1}`);
  stats.frames += 1;
}

connect(onMessage);
