// Hivemind's web client: a client of the project's server through the
// WebSocket of this page (internal/web). Plain JS, no library: the server
// sends row diffs of each agent's terminal (only for the panes this page
// shows), the engine's state and notices; the page sends the panes it
// shows and the one it focuses, keys typed into a focused agent and the
// engine's commands.
"use strict";

const $ = (id) => document.getElementById(id);
const PHASES = {
  idle: "idle", project_selected: "starting", planning: "the Lead is planning", plan_review: "the Reviewer reads the plan",
  plan_revision: "the Lead revises the plan", plan_approval: "the plan waits for your approval", executing: "the Workers build",
  checkpoint: "at a checkpoint", checkpoint_review: "the Reviewer checks the checkpoint", checkpoint_fix: "the Workers fix the review's issues",
  friction_logged: "friction logged", friction_sync: "friction: the Lead syncs", friction_resolution: "friction: resolving",
  complete: "complete", error: "stopped on an error", paused: "paused", needs_human: "needs you", cancelled: "cancelled",
};

const st = {
  ws: null, ro: false, info: null, state: null, events: [],
  panes: new Map(), // agent -> {gen, el, term, rows: [], cursor, modes, visible}
  order: [], shown: null, focused: null, nextId: 1, pending: new Map(),
};

function send(m) { if (st.ws && st.ws.readyState === 1) st.ws.send(JSON.stringify(m)); }
function cmd(c, extra) { send(Object.assign({ t: "cmd", cmd: c }, extra || {})); }
function request(m) {
  m.id = st.nextId++;
  return new Promise((resolve) => { st.pending.set(m.id, resolve); send(m); });
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  st.ws = ws;
  ws.onmessage = (e) => receive(JSON.parse(e.data));
  ws.onclose = () => {
    $("phase").textContent = "disconnected (reload to reconnect)";
    document.body.classList.add("gone");
  };
}

function receive(m) {
  switch (m.t) {
    case "hello":
      st.ro = m.ro; st.info = m.info;
      document.body.classList.toggle("ro", m.ro);
      $("ro").hidden = !m.ro;
      $("title").textContent = m.info.title || "Hivemind";
      document.title = "Hivemind: " + (m.info.title || m.info.project);
      break;
    case "panes": setPanes(m.panes || []); break;
    case "pane": applyPane(m.pane); break;
    case "snapshot": st.state = m.snap.state; st.events = m.snap.events || []; renderState(); break;
    case "notice": notice(m.text); break;
    case "cmd": { const r = st.pending.get(m.id); if (r) { st.pending.delete(m.id); r(m); } break; }
    case "bye": $("phase").textContent = "the server stopped: " + (m.text || ""); break;
  }
}

let noticeTimer = 0;
function notice(text) {
  const n = $("notice");
  n.textContent = text; n.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { n.hidden = true; }, 6000);
}

// ---- panes

function setPanes(list) {
  const keep = new Set();
  for (const p of list) {
    keep.add(p.agent);
    let pane = st.panes.get(p.agent);
    if (pane && pane.gen !== p.gen) { pane.rows = []; pane.term.replaceChildren(pane.cur); pane.gen = p.gen; }
    if (!pane) pane = newPane(p.agent, p.gen);
  }
  for (const [id, pane] of st.panes) if (!keep.has(id)) { pane.el.remove(); st.panes.delete(id); observer.unobserve(pane.el); }
  st.order = list.map((p) => p.agent);
  for (const id of st.order) $("grid").appendChild(st.panes.get(id).el); // server order
  if (!st.shown || !st.panes.has(st.shown)) st.shown = st.order[0] || null;
  renderList(); showPhonePane(); sendView();
}

function newPane(id, gen) {
  const el = document.createElement("div");
  el.className = "pane"; el.dataset.agent = id;
  const title = document.createElement("div"); title.className = "ptitle";
  const name = document.createElement("span"); name.className = "name"; name.textContent = id;
  const stt = document.createElement("span"); stt.className = "st";
  const type = document.createElement("button"); type.textContent = "type"; type.dataset.act = ""; type.title = "type into this agent";
  type.onclick = () => focusPane(st.focused === id ? null : id);
  const pause = document.createElement("button"); pause.textContent = "pause"; pause.dataset.act = ""; pause.className = "ppause";
  pause.onclick = () => cmd("pause_agent", { agent: id });
  title.append(name, stt, pause, type);
  const term = document.createElement("pre"); term.className = "term";
  const cur = document.createElement("div"); cur.className = "cur"; cur.hidden = true;
  term.appendChild(cur);
  term.onclick = () => { if (st.focused === id) $("keys").focus(); };
  el.append(title, term);
  const pane = { id, gen, el, term, cur, st: stt, pauseBtn: pause, typeBtn: type, rows: [], visible: false };
  st.panes.set(id, pane);
  observer.observe(el);
  return pane;
}

// Only the panes on screen are asked of the server (none while the page
// is hidden): a hidden one costs nothing (a phone shows one). The focus,
// the pane typed into or the phone's one, takes new content at the
// server's rate; the bridge asks the others at the unfocused rate.
const observer = new IntersectionObserver((entries) => {
  let changed = false;
  for (const e of entries) {
    const pane = st.panes.get(e.target.dataset.agent);
    if (pane && pane.visible !== e.isIntersecting) { pane.visible = e.isIntersecting; changed = true; }
  }
  if (changed) sendView();
});

let lastView = "";
function sendView() {
  const ids = document.hidden ? [] : st.order.filter((id) => st.panes.get(id).visible);
  const focus = [st.focused, phone.matches ? st.shown : null].find((id) => id && ids.includes(id));
  const m = { t: "view", view: ids.map((agent) => ({ agent })) };
  if (focus) m.focus = focus;
  const key = JSON.stringify(m);
  if (key === lastView) return;
  lastView = key;
  send(m);
}
document.addEventListener("visibilitychange", sendView);

function applyPane(p) {
  const pane = st.panes.get(p.agent);
  if (!pane || pane.gen !== p.gen) return;
  const term = pane.term;
  while (pane.rows.length < p.n) {
    const row = document.createElement("div"); row.className = "row";
    term.insertBefore(row, pane.cur);
    pane.rows.push(row);
  }
  while (pane.rows.length > p.n) pane.rows.pop().remove();
  for (const r of p.set || []) if (r.i >= 0 && r.i < p.n) renderRow(pane.rows[r.i], r.s);
  const cols = pane.rows.length ? pane.rows[0].textContent.length : 0;
  if (cols !== pane.cols) { pane.cols = cols; fit(pane); }
  const c = p.cur;
  if (c && c.vis && p.modes && p.modes.CursorVisible !== false && !p.scroll) {
    pane.cur.hidden = false;
    pane.cur.style.left = "calc(4px + " + c.x + "ch)";
    pane.cur.style.top = "calc(4px + " + (c.y * 1.25) + "em)";
  } else pane.cur.hidden = true;
  pane.modes = p.modes || {};
}

// ---- SGR rendering

const BASE16 = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
  "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"];
function color256(n) {
  if (n < 16) return BASE16[n];
  if (n < 232) { n -= 16; const v = [0, 95, 135, 175, 215, 255]; return `rgb(${v[Math.floor(n / 36)]},${v[Math.floor(n / 6) % 6]},${v[n % 6]})`; }
  const g = 8 + (n - 232) * 10; return `rgb(${g},${g},${g})`;
}

function sgr(style, params) {
  const ps = params === "" ? [0] : params.split(/[;:]/).map((x) => (x === "" ? 0 : parseInt(x, 10)));
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i];
    if (p === 0) { for (const k in style) delete style[k]; }
    else if (p === 1) style.bold = true;
    else if (p === 2) style.faint = true;
    else if (p === 3) style.italic = true;
    else if (p === 4) style.underline = true;
    else if (p === 7) style.reverse = true;
    else if (p === 9) style.strike = true;
    else if (p === 22) { delete style.bold; delete style.faint; }
    else if (p === 23) delete style.italic;
    else if (p === 24) delete style.underline;
    else if (p === 27) delete style.reverse;
    else if (p === 29) delete style.strike;
    else if (p >= 30 && p <= 37) style.fg = BASE16[p - 30];
    else if (p >= 90 && p <= 97) style.fg = BASE16[p - 90 + 8];
    else if (p >= 40 && p <= 47) style.bg = BASE16[p - 40];
    else if (p >= 100 && p <= 107) style.bg = BASE16[p - 100 + 8];
    else if (p === 39) delete style.fg;
    else if (p === 49) delete style.bg;
    else if (p === 38 || p === 48) {
      const key = p === 38 ? "fg" : "bg";
      if (ps[i + 1] === 5) { style[key] = color256(ps[i + 2] || 0); i += 2; }
      else if (ps[i + 1] === 2) { style[key] = `rgb(${ps[i + 2] || 0},${ps[i + 3] || 0},${ps[i + 4] || 0})`; i += 4; }
    }
  }
}

function span(text, style) {
  const s = document.createElement("span");
  s.textContent = text;
  let fg = style.fg, bg = style.bg;
  if (style.reverse) { [fg, bg] = [bg || "#000000", fg || "#d0d0d0"]; }
  if (fg) s.style.color = fg;
  if (bg) s.style.backgroundColor = bg;
  if (style.bold) s.style.fontWeight = "bold";
  if (style.faint) s.style.opacity = "0.6";
  if (style.italic) s.style.fontStyle = "italic";
  const deco = (style.underline ? "underline " : "") + (style.strike ? "line-through" : "");
  if (deco) s.style.textDecoration = deco;
  return s;
}

// renderRow draws one row: its text with the SGR styles; other escape
// sequences (links, titles) draw nothing.
function renderRow(el, s) {
  if (s.indexOf("\x1b") < 0) { el.textContent = s; return; }
  const out = [];
  const style = {};
  let text = "";
  const flush = () => { if (text) { out.push(Object.keys(style).length ? span(text, style) : document.createTextNode(text)); text = ""; } };
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch !== "\x1b") { text += ch; continue; }
    const next = s[i + 1];
    if (next === "[") {
      let j = i + 2;
      while (j < s.length && (s.charCodeAt(j) < 0x40 || s.charCodeAt(j) > 0x7e)) j++;
      if (s[j] === "m") { flush(); sgr(style, s.slice(i + 2, j)); }
      i = j;
    } else if (next === "]") {
      let j = i + 2;
      while (j < s.length && s[j] !== "\x07" && !(s[j] === "\x1b" && s[j + 1] === "\\")) j++;
      i = s[j] === "\x07" ? j : j + 1;
    } else i++;
  }
  flush();
  el.replaceChildren(...out);
}

// ---- typing into an agent (its keys go to the server, which guards the
// prompt line as it does for the terminal client)

function focusPane(id) {
  if (st.focused) { const p = st.panes.get(st.focused); if (p) { p.el.classList.remove("focused"); p.typeBtn.classList.remove("on"); } }
  st.focused = id;
  if (id) {
    const p = st.panes.get(id);
    p.el.classList.add("focused"); p.typeBtn.classList.add("on"); p.typeBtn.textContent = "typing";
    $("keys").focus();
  }
  for (const [pid, p] of st.panes) if (pid !== id) p.typeBtn.textContent = "type";
  sendView();
}

function b64(bytes) { let s = ""; for (const b of bytes) s += String.fromCharCode(b); return btoa(s); }
function typeText(text) {
  if (!st.focused || st.ro || !text) return;
  send({ t: "input", agent: st.focused, data: b64(new TextEncoder().encode(text)) });
}

const KEYS = { Enter: "\r", Backspace: "\x7f", Tab: "\t", Escape: "\x1b", Delete: "\x1b[3~", Home: "\x1b[H", End: "\x1b[F",
  PageUp: "\x1b[5~", PageDown: "\x1b[6~" };
const ARROWS = { ArrowUp: "A", ArrowDown: "B", ArrowRight: "C", ArrowLeft: "D" };

function setupKeys() {
  const k = $("keys");
  k.addEventListener("keydown", (e) => {
    if (!st.focused) return;
    const app = st.panes.get(st.focused)?.modes?.AppCursorKeys;
    let seq = null;
    if (e.ctrlKey && !e.altKey && e.key.length === 1) {
      const c = e.key.toUpperCase().charCodeAt(0);
      if (c >= 64 && c <= 95) seq = String.fromCharCode(c - 64);
    } else if (KEYS[e.key]) seq = KEYS[e.key];
    else if (ARROWS[e.key]) seq = (app ? "\x1bO" : "\x1b[") + ARROWS[e.key];
    if (seq !== null) { e.preventDefault(); typeText(seq); }
  });
  k.addEventListener("input", () => { typeText(k.value); k.value = ""; });
  k.addEventListener("paste", (e) => {
    e.preventDefault();
    const text = e.clipboardData.getData("text");
    const bp = st.panes.get(st.focused)?.modes?.BracketedPaste;
    typeText(bp ? "\x1b[200~" + text + "\x1b[201~" : text);
  });
}

// ---- the state: header, needs-you list, plan gate, events, agent list

function elapsed(s) {
  const c = s.clock || {};
  let ns = c.ran_ns || 0;
  if (c.since && !c.since.startsWith("0001")) ns += (Date.now() - Date.parse(c.since)) * 1e6;
  const t = Math.max(0, Math.floor(ns / 1e9));
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(Math.floor(t / 3600))}:${pad(Math.floor(t / 60) % 60)}:${pad(t % 60)}`;
}

function needsYou(s) {
  const out = [];
  const reason = s.reason || s.error || "";
  const buttons = " — the Retry button tries again, the Abandon button ends the task";
  if (s.state === "needs_human") out.push("The task needs you" + (reason ? ": " + reason : "") + buttons);
  if (s.state === "error") out.push("The task stopped on an error" + (reason ? ": " + reason : "") + buttons);
  if (s.state === "plan_approval") out.push("Approve the plan, or send the Lead feedback");
  for (const [id, a] of Object.entries(s.agents || {})) if (a.paused) out.push(id + " is paused (its messages wait)");
  return out;
}

function renderState() {
  const s = st.state;
  if (!s) return;
  // idle once the task ran: it was abandoned (vocab.State.Abandoned)
  const abandoned = s.state === "idle" && !!s.finished_at;
  $("phase").textContent = abandoned ? "abandoned" : PHASES[s.state] || s.state;
  $("cp").textContent = s.total_checkpoints ? `checkpoint ${s.current_checkpoint}/${s.total_checkpoints}` : "";
  $("clock").textContent = elapsed(s);
  let tokens = 0, usd = 0, known = true;
  for (const a of Object.values(s.agents || {})) {
    const u = a.usage || {};
    tokens += (u.input_tokens || 0) + (u.output_tokens || 0) + (u.cache_read_tokens || 0) + (u.cache_write_tokens || 0);
    usd += u.cost_usd || 0;
    if (!u.cost_known && (u.input_tokens || u.output_tokens)) known = false;
  }
  $("spend").textContent = `${tokens.toLocaleString()} tokens · ${known ? "" : "≥ "}$${usd.toFixed(2)}`;
  const holds = Object.values(s.holds || {});
  $("holds").textContent = holds.length ? "held: " + holds.map((h) => `${h.account} until ${new Date(h.until).toLocaleTimeString()}`).join(", ") : "";

  const paused = s.state === "paused";
  $("pause").textContent = paused ? "Resume" : "Pause";
  $("pause").classList.toggle("on", paused);
  const human = s.state === "needs_human" || s.state === "error";
  $("retry").hidden = !human; $("abandon").hidden = !human;
  $("cancel").hidden = abandoned || ["complete", "cancelled"].includes(s.state);

  const needs = needsYou(s);
  $("needs").hidden = needs.length === 0;
  $("needslist").replaceChildren(...needs.map((t) => { const li = document.createElement("li"); li.textContent = t; return li; }));

  const gate = s.state === "plan_approval";
  $("plan").hidden = !gate;
  if (gate) $("plantext").textContent = planText(s.plan);

  for (const [id, pane] of st.panes) {
    const a = (s.agents || {})[id] || {};
    pane.st.textContent = [a.role, a.status, a.subtask].filter(Boolean).join(" · ");
    pane.pauseBtn.textContent = a.paused ? "resume" : "pause";
    pane.pauseBtn.classList.toggle("on", !!a.paused);
  }
  renderList();
  const ev = st.events.slice(-8).reverse();
  $("events").replaceChildren(...ev.map((e) => {
    const d = document.createElement("div");
    d.textContent = `${new Date(e.time).toLocaleTimeString()} ${e.type}${e.agent ? " " + e.agent : ""}`;
    return d;
  }));
}

function planText(p) {
  if (!p) return "(the plan is in the task directory)";
  const lines = [p.summary || ""];
  for (const c of p.checkpoints || []) {
    lines.push("", `Checkpoint ${c.id}: ${c.name}`);
    for (const t of p.subtasks || []) if (t.checkpoint === c.id) lines.push(`  ${t.id}: ${t.description}`);
  }
  return lines.join("\n");
}

// The phone's list of agents: the ones that need you first.
function renderList() {
  const s = st.state || {};
  const agents = s.agents || {};
  const ids = [...st.order].sort((a, b) => (agents[b]?.paused ? 1 : 0) - (agents[a]?.paused ? 1 : 0));
  $("agents").replaceChildren(...ids.map((id) => {
    const b = document.createElement("button");
    b.textContent = id + (agents[id]?.status ? " · " + agents[id].status : "");
    b.classList.toggle("on", id === st.shown);
    b.onclick = () => { st.shown = id; renderList(); showPhonePane(); sendView(); };
    return b;
  }));
}

// On a phone the shown pane's font shrinks (down to 7px) so that more of
// its columns fit; the rest scrolls sideways.
const phone = matchMedia("(max-width: 760px)");
function fit(pane) {
  if (!phone.matches || !pane.cols) { pane.term.style.fontSize = ""; return; }
  const w = pane.term.clientWidth - 8;
  if (w <= 0) return;
  pane.term.style.fontSize = Math.max(7, Math.min(12, w / (pane.cols * 0.6))).toFixed(1) + "px";
}
function fitAll() { for (const p of st.panes.values()) fit(p); }
phone.addEventListener("change", () => { fitAll(); sendView(); });
addEventListener("resize", fitAll);

function showPhonePane() { for (const [id, p] of st.panes) p.el.classList.toggle("shown", id === st.shown); fitAll(); }

function setupActions() {
  $("pause").onclick = () => cmd(st.state && st.state.state === "paused" ? "resume" : "pause");
  $("cancel").onclick = () => { if (confirm("Cancel the task? The agents stop.")) cmd("cancel"); };
  $("retry").onclick = () => cmd("retry");
  $("abandon").onclick = () => { if (confirm("Abandon the task?")) cmd("abandon"); };
  const decide = async (approve) => {
    $("planerr").textContent = "";
    const fb = $("feedback").value;
    if (!approve && !fb.trim()) { $("planerr").textContent = "write the feedback first"; return; }
    const r = await request({ t: "cmd", cmd: "plan", approve, feedback: approve ? "" : fb });
    if (r.err) $("planerr").textContent = r.err; else $("feedback").value = "";
  };
  $("approve").onclick = () => decide(true);
  $("sendfb").onclick = () => decide(false);
}

setupKeys();
setupActions();
setInterval(() => { if (st.state) $("clock").textContent = elapsed(st.state); }, 1000);
connect();
