"use strict";
// One arena frame drawn in a canvas as `melee-agent watch` draws it (melee_agent/report/watch.py, Painter): the main
// view of the stage and its platforms, both fighters' bodies (the hit test's capsules) and hitboxes, an inset map of
// the blast zones, the clock, and a HUD with percent, stocks and actions. The geometry and colours come from the
// server (settings.geometry: every stage's floor edge, platforms and blast zones, and the one played), so the page
// and watch read the same constants.

function clockText(frames) {  // watch.clock: frames (60 a second) as m:ss.cc
  const cs = Math.floor(frames * 100 / 60);
  return `${Math.floor(cs / 6000)}:${String(Math.floor(cs / 100) % 60).padStart(2, "0")}.${String(cs % 100).padStart(2, "0")}`;
}

function makePainter(canvas, G, labels, stageName) {
  const s = 3, [L, R, B, T] = G.view, C = G.colors;
  const stage = G.stages[stageName || G.stage];
  const mainW = (R - L) * s, mainH = (T - B) * s, hudH = 78;
  canvas.width = mainW; canvas.height = mainH + hudH;
  const g = canvas.getContext("2d");
  const px = (x) => (x - L) * s, py = (y) => (T - y) * s;
  const [bl, br, bb, bt] = stage.blast, ms = s * G.map_scale;
  const mLeft = mainW - (br - bl) * ms - 10, mTop = 10;
  const mx = (x) => mLeft + (x - bl) * ms, my = (y) => mTop + (bt - y) * ms;
  const FILL = [[C.fox, C.fox_edge], [C.marth, C.marth_edge]];
  const font = (bold, px) => `${bold ? "bold " : ""}${px}px DejaVu Sans, sans-serif`;

  function background() {
    g.fillStyle = C.sky; g.fillRect(0, 0, canvas.width, canvas.height);
    const e = stage.edge;
    const body = [[-e, 0], [e, 0], [e - 6, -10], [e - 26, -22], [e - 40, -42], [-(e - 40), -42], [-(e - 26), -22], [-(e - 6), -10]];
    g.beginPath(); body.forEach(([x, y], i) => (i ? g.lineTo(px(x), py(y)) : g.moveTo(px(x), py(y))));
    g.closePath(); g.fillStyle = C.stage; g.fill();
    g.strokeStyle = C.stage_top; g.lineWidth = 3;
    g.beginPath(); g.moveTo(px(-e), py(0)); g.lineTo(px(e), py(0)); g.stroke();
    for (const side of [-e, e]) { g.beginPath(); g.moveTo(px(side), py(0)); g.lineTo(px(side), py(-5)); g.stroke(); }
    for (const [pl, pr, ph] of stage.platforms) {  // soft platforms: a top to stand on, a thin body for looks
      g.fillStyle = C.stage; g.fillRect(px(pl), py(ph), (pr - pl) * s, 3 * s);
      g.beginPath(); g.moveTo(px(pl), py(ph)); g.lineTo(px(pr), py(ph)); g.stroke();
    }
    g.fillStyle = C.hud; g.fillRect(mx(bl), my(bt), (br - bl) * ms, (bt - bb) * ms);
    g.strokeStyle = C.blast; g.lineWidth = 1; g.strokeRect(mx(bl), my(bt), (br - bl) * ms, (bt - bb) * ms);
    g.strokeStyle = C.stage_top; g.lineWidth = 2;
    g.beginPath(); g.moveTo(mx(-e), my(0)); g.lineTo(mx(e), my(0)); g.stroke();
    g.lineWidth = 1;
    for (const [pl, pr, ph] of stage.platforms) { g.beginPath(); g.moveTo(mx(pl), my(ph)); g.lineTo(mx(pr), my(ph)); g.stroke(); }
    g.strokeStyle = C.dim; g.lineWidth = 1; g.strokeRect(mx(L), my(T), (R - L) * ms, (T - B) * ms);
    g.fillStyle = C.blast; g.font = font(false, 11); g.textBaseline = "top"; g.textAlign = "left";
    g.fillText("blast zones", mx(bl), my(bb) + 3);
    g.fillStyle = C.dim; g.fillText("red: hitboxes · hollow: intangible · white edge: hitstun or shieldstun", 10, 30);
  }

  function fighter(f, fill, edge) {
    const r = f.r, top = f.top + r, bottom = f.bottom - r;
    g.beginPath();
    g.roundRect(px(f.x - r), py(top), 2 * r * s, (top - bottom) * s, r * s);
    if (!f.intangible) { g.fillStyle = fill; g.fill(); }
    g.strokeStyle = f.hitstun ? C.stun : (f.intangible ? fill : edge);
    g.lineWidth = f.intangible || f.hitstun ? 3 : 1.5; g.stroke();
    const root = f.x + f.facing * (r - 0.5), tip = f.x + f.facing * (r + 3.0), y = f.top - 1.0;  // the nose
    g.beginPath(); g.moveTo(px(root), py(y + 2)); g.lineTo(px(tip), py(y)); g.lineTo(px(root), py(y - 2)); g.closePath();
    if (!f.intangible) { g.fillStyle = fill; g.fill(); }
    g.strokeStyle = f.intangible ? fill : edge; g.lineWidth = 1; g.stroke();
    if (f.shield !== null) {
      const rr = (f.top - f.bottom + 2 * r) / 2 * (0.5 + 0.5 * Math.max(f.shield, 0) / G.shield_max) + 2;
      g.beginPath(); g.arc(px(f.x), py((f.top + f.bottom) / 2), rr * s, 0, 2 * Math.PI);
      g.strokeStyle = C.shield; g.lineWidth = 2; g.stroke();
    }
    g.fillStyle = fill; g.font = font(true, 13); g.textAlign = "center"; g.textBaseline = "bottom";
    g.fillText(f.name, px(f.x), py(f.top + r + 2));
  }

  function onMap(f, fill) {
    const x = Math.min(Math.max(f.x, bl), br), y = Math.min(Math.max((f.top + f.bottom) / 2, bb), bt);
    g.beginPath(); g.arc(mx(x), my(y), 3, 0, 2 * Math.PI); g.fillStyle = fill; g.fill();
  }

  function hud(frame) {
    const w = canvas.width, top = mainH + 10;
    frame.fighters.forEach((f, i) => {
      const [fill] = FILL[i], x = w * (0.05 + 0.5 * i), tx = x + 118;
      g.textAlign = "left"; g.textBaseline = "top";
      g.fillStyle = C.text; g.font = font(true, 38); g.fillText(`${Math.round(f.percent)}%`, x, top);
      g.fillStyle = fill; g.font = font(true, 15); g.fillText(`${f.name} · ${labels[i]}`, tx, top);
      for (let j = 0; j < Math.max(f.stock, 0); j++) {
        g.beginPath(); g.arc(tx + 5 + j * 15, top + 30, 5, 0, 2 * Math.PI); g.fill();
      }
      g.fillStyle = C.dim; g.font = font(false, 13); g.fillText(`${f.action} · frame ${f.action_frame}`, tx, top + 42);
    });
  }

  return function draw(frame, title) {
    background();
    frame.fighters.forEach((f, i) => fighter(f, ...FILL[i]));
    for (const f of frame.fighters) {
      for (const [x, y, r] of f.hitboxes) {
        g.beginPath(); g.arc(px(x), py(y), r * s, 0, 2 * Math.PI);
        g.fillStyle = C.hitbox; g.fill(); g.strokeStyle = C.hitbox_edge; g.lineWidth = 1; g.stroke();
      }
    }
    frame.fighters.forEach((f, i) => onMap(f, FILL[i][0]));
    g.fillStyle = C.hud; g.fillRect(0, mainH, canvas.width, hudH);
    g.fillStyle = C.text; g.font = font(true, 22); g.textAlign = "center"; g.textBaseline = "top";
    g.fillText(clockText(frame.frame), mainW / 2, 8);
    g.fillStyle = C.dim; g.font = font(false, 13); g.textAlign = "left"; g.fillText(title, 10, 10);
    hud(frame);
  };
}

// One WebSocket to the page's server, reconnecting while the page is open; `onFrame(message)` for each message.
function connect(onMessage, onOpen) {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const ws = new WebSocket(url);
  ws.onmessage = (e) => onMessage(JSON.parse(e.data));
  ws.onopen = () => onOpen && onOpen(ws);
  ws.onclose = () => setTimeout(() => connect(onMessage, onOpen), 500);
  return ws;
}
