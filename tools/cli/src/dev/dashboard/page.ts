/*
 * The dashboard's one page, written here and shipped in the package (no CDN, no framework: plain
 * DOM and SVG, a few hundred lines, nothing to install or keep up to date). Five views, one per
 * `#hash`: the catalog (/api/catalog), the explorer (POST /api/call, answered as JSON lines),
 * live calls (/api/records, EventSource), traces (/api/traces, /api/traces/<id>) and the service
 * graph (/api/graph). Every value from a service is set as text, never as HTML. The explorer's
 * metadata (a JWT) lives in its text box only: never stored.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc dev</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
  header { background: #1f2937; color: #fff; padding: .5rem 1.5rem; display: flex; gap: 1.5rem; align-items: baseline; }
  header h1 { font-size: 1.1rem; margin: 0; }
  header a { color: #cbd5e1; text-decoration: none; padding: .2rem .4rem; border-radius: 4px; }
  header a.active { background: #374151; color: #fff; }
  main { padding: .5rem 1.5rem 2rem; }
  section.view { display: none; } section.view.active { display: block; }
  h2 { font-size: 1.1rem; } h3 { font-size: 1rem; margin: .8rem 0 .3rem; }
  table { border-collapse: collapse; width: 100%; }
  td, th { text-align: left; padding: 2px 8px; border-bottom: 1px solid #e5e7eb; font-family: ui-monospace, monospace; font-size: 12px; vertical-align: top; }
  .error { color: #b00020; } .muted { color: #6b7280; } .ok { color: #047857; }
  code, pre, textarea, select, input { font-family: ui-monospace, monospace; font-size: 12px; }
  pre { background: #f3f4f6; padding: .4rem .6rem; margin: .2rem 0; white-space: pre-wrap; word-break: break-all; }
  ul.methods li { margin: .15rem 0; }
  .fields { color: #6b7280; margin-left: 1rem; }
  .doc { color: #374151; font-style: italic; margin-left: 1rem; white-space: pre-wrap; }
  .rules { color: #92400e; }
  button { font-size: 12px; cursor: pointer; }
  #x-form { display: grid; grid-template-columns: 9rem 1fr; gap: .4rem .8rem; max-width: 60rem; }
  #x-form textarea { width: 100%; }
  .bar { background: #60a5fa; height: 12px; border-radius: 2px; position: relative; }
  .bar.error { background: #f87171; }
  .lane { position: relative; width: 100%; background: #f9fafb; height: 14px; }
  svg text { font: 12px system-ui, sans-serif; }
  svg g.edge text { paint-order: stroke; stroke: #fff; stroke-width: 6px; stroke-linejoin: round; }
  form.filters { display: flex; gap: 1rem; flex-wrap: wrap; margin-bottom: .5rem; }
</style>
</head>
<body>
<header><h1>svc dev</h1><nav id="nav">
  <a href="#catalog">Catalog</a><a href="#explorer">Explorer</a><a href="#calls">Live calls</a><a href="#traces">Traces</a><a href="#graph">Graph</a>
</nav></header>
<main>
<section class="view" id="view-catalog"><h2>Catalog</h2><div id="catalog" class="muted">loading…</div></section>

<section class="view" id="view-explorer"><h2>Explorer</h2>
<p class="muted">Calls go through svc dev to the service's own gRPC port. Metadata is sent with this call only and never stored.</p>
<div id="x-form">
  <label for="x-method">method</label><select id="x-method"></select>
  <label for="x-request">request (JSON)</label><div><textarea id="x-request" rows="8" spellcheck="false"></textarea><div id="x-problems" class="error"></div><div id="x-rules" class="rules"></div></div>
  <label for="x-metadata">metadata</label><textarea id="x-metadata" rows="2" spellcheck="false" placeholder="authorization: Bearer eyJ…   (one key: value a line)"></textarea>
  <span></span><div><button id="x-send" type="button">Send</button> <span id="x-state" class="muted"></span></div>
</div>
<h3>Status</h3><pre id="x-status" class="muted">no call yet</pre>
<h3>Response</h3><div id="x-messages"></div>
<h3>Headers</h3><pre id="x-headers"></pre>
<h3>Trailers</h3><pre id="x-trailers"></pre>
</section>

<section class="view" id="view-calls"><h2>Live calls</h2>
<form class="filters" id="filters">
  <label>service <select id="f-service"><option value="">all</option></select></label>
  <label>method <input id="f-method" size="24" placeholder="GetAccount"></label>
  <label>status <select id="f-status"><option value="">all</option><option value="ok">ok</option><option value="error">error</option></select></label>
  <label>request id <input id="f-requestId" size="38"></label>
</form>
<table><thead><tr><th>time</th><th>service</th><th>entry</th><th>operation</th><th>code</th><th>ms</th><th>request id</th><th>trace</th></tr></thead>
<tbody id="calls"></tbody></table>
</section>

<section class="view" id="view-traces"><h2>Traces</h2>
<div id="trace"></div>
<h3>Recent traces</h3>
<table><thead><tr><th>start</th><th>operation</th><th>services</th><th>records</th><th>spans</th><th>errors</th><th>ms</th><th>trace id</th></tr></thead>
<tbody id="traces-list"></tbody></table>
</section>

<section class="view" id="view-graph"><h2>Service graph</h2>
<svg id="graph-svg" width="1000" height="320" role="img" aria-label="services and their client edges"></svg>
<h3>Services at a glance</h3>
<table><thead><tr><th>service</th><th>health</th><th>calls</th><th>/min</th><th>errors</th><th>p50 ms</th><th>p95 ms</th></tr></thead>
<tbody id="graph-nodes"></tbody></table>
<h3>What svc dev did</h3>
<table><tbody id="dev-log"></tbody></table>
</section>
</main>
<script>
'use strict';
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
const row = (cells, cls) => { const tr = el('tr', undefined, cls); for (const c of cells) { const td = el('td'); if (c instanceof Node) td.append(c); else td.textContent = c === undefined || c === null ? '' : String(c); tr.append(td); } return tr; };
let methods = [];

// ---- views ----
function show() {
  const hash = location.hash.slice(1) || 'catalog';
  const view = hash.startsWith('trace/') ? 'traces' : hash;
  for (const s of document.querySelectorAll('section.view')) s.classList.toggle('active', s.id === 'view-' + view);
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.getAttribute('href') === '#' + view);
  if (view === 'traces') { loadTraces(); if (hash.startsWith('trace/')) loadTrace(decodeURIComponent(hash.slice(6))); else $('trace').textContent = ''; }
  if (view === 'graph') loadGraph();
}
window.addEventListener('hashchange', show);
setInterval(() => {
  const h = location.hash;
  if (h === '#graph') loadGraph();
  if (h === '#traces' || h.startsWith('#trace/')) loadTraces();
  // The services' tracers send their spans a moment after the call: the trace fills in.
  if (h.startsWith('#trace/')) loadTrace(decodeURIComponent(h.slice(7)));
  loadLog();
}, 2000);

// ---- svc dev's log: a restart or a reload reads the catalog again ----
let logged = -1;
async function loadLog() {
  const { lines } = await (await fetch('/api/log')).json();
  if (logged >= 0 && lines.length !== logged && lines.slice(logged).some((l) => / started pid | reloading /.test(l.line))) loadCatalog();
  logged = lines.length;
  const body = $('dev-log'); body.textContent = '';
  for (const l of lines.slice(-30).reverse()) body.append(row([l.time, l.line], / exited | failed /.test(l.line) ? 'error log' : 'log'));
}

// ---- catalog ----
const fieldText = (f) => f.name + ': ' + (f.repeated ? 'repeated ' : '') + f.type;
// A message's fields on one line, each with its buf.validate rules, then those with a comment.
function schema(type, fields, comment) {
  const box = el('div', undefined, 'fields');
  if (comment) box.append(el('div', comment, 'doc'));
  box.append(type + ' { ');
  fields.forEach((f, i) => {
    if (i > 0) box.append(', ');
    box.append(fieldText(f));
    if (f.rules && f.rules.length) box.append(' ', el('span', '[' + f.rules.join(', ') + ']', 'rules'));
  });
  box.append(' }');
  for (const f of fields) if (f.comment) box.append(el('div', f.name + ': ' + f.comment, 'doc'));
  return box;
}
// Which of the entry's middleware the method goes through, and which skip it (ignore lists).
function guardsText(guards) {
  const note = (g) => g.middleware + (g.note ? ' (' + g.note + ')' : '');
  const through = guards.filter((g) => g.applies).map(note);
  const skipped = guards.filter((g) => !g.applies).map(note);
  return (through.length ? 'goes through ' + through.join(', ') : 'no middleware') + (skipped.length ? ' · skipped by ' + skipped.join(', ') : '');
}
async function loadCatalog() {
  const { services } = await (await fetch('/api/catalog')).json();
  const root = $('catalog'); root.textContent = ''; root.className = '';
  const chosen = $('x-method').value; const filter = $('f-service').value;
  $('f-service').textContent = ''; const all = el('option', 'all'); all.value = ''; $('f-service').append(all);
  methods = [];
  for (const s of services) {
    const opt = el('option', s.name); opt.value = s.name; $('f-service').append(opt);
    const sec = el('section'); sec.append(el('h3', s.name));
    const list = el('ul');
    for (const e of s.entries) {
      const li = el('li', e.kind + ' ' + e.name + (e.port ? ' (port ' + e.port + ')' : ''));
      if (e.protocols.length) li.append(' ', el('span', 'answers on ' + e.protocols.join(', '), 'muted'));
      if (e.middleware.length) li.append(' ', el('span', '· middleware: ' + e.middleware.join(', '), 'muted'));
      if (e.problem) li.append(el('div', e.problem, 'muted'));
      for (const svc of e.services) {
        const ul = el('ul', undefined, 'methods');
        for (const m of svc.methods) {
          const index = methods.push({ service: s.name, entry: e.name, method: m }) - 1;
          const item = el('li', undefined, 'method'); item.dataset.path = m.path; item.dataset.service = s.name;
          item.append(el('code', m.path), ' (' + (m.clientStreaming ? 'stream ' : '') + m.requestType + ') → (' + (m.serverStreaming ? 'stream ' : '') + m.responseType + ') ');
          const routes = m.rest.map((r) => r.verb + ' ' + r.path);
          item.append(el('span', ['gRPC'].concat(routes.length ? ['REST ' + routes.join(', ')] : []).join(' · ') + (m.serverStreaming ? ' · server stream' : ''), 'muted'), ' ');
          const btn = el('button', 'try'); btn.type = 'button';
          btn.addEventListener('click', () => { $('x-method').value = String(index); pick(); location.hash = '#explorer'; });
          if (!m.clientStreaming) item.append(btn);
          if (m.comment) item.append(el('div', m.comment, 'doc'));
          if (e.middleware.length) item.append(el('div', guardsText(m.guards), 'fields guards'));
          item.append(schema(m.requestType, m.requestFields, m.requestComment), schema('→ ' + m.responseType, m.responseFields, m.responseComment));
          ul.append(item);
        }
        const sub = el('ul'); const inner = el('li', svc.name); if (svc.comment) inner.append(el('div', svc.comment, 'doc')); inner.append(ul); sub.append(inner); li.append(sub);
      }
      list.append(li);
    }
    sec.append(list); root.append(sec);
  }
  const sel = $('x-method'); sel.textContent = '';
  methods.forEach((m, i) => { if (m.method.clientStreaming) return; const o = el('option', m.service + ' · ' + m.method.path + (m.method.serverStreaming ? ' (stream)' : '')); o.value = String(i); sel.append(o); });
  $('f-service').value = filter;
  // Read again after a restart: the method picked and its request stay as they were.
  if (chosen !== '' && methods[Number(chosen)]) sel.value = chosen; else pick();
}

// ---- explorer ----
const INTS = ['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32'];
const LONGS = ['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'];
function sample(f) {
  if (f.repeated) return [];
  if (f.kind === 'message') return {};
  if (f.kind === 'enum') return '';
  if (f.type === 'bool') return false;
  if (INTS.includes(f.type) || f.type === 'float' || f.type === 'double') return 0;
  if (LONGS.includes(f.type)) return '0';
  return '';
}
function checkValue(f, v, where) {
  if (f.kind === 'message') return v !== null && typeof v === 'object' && !Array.isArray(v) ? [] : [where + ' must be an object (' + f.type + ')'];
  if (f.kind === 'enum') return typeof v === 'string' || Number.isInteger(v) ? [] : [where + ' must be a ' + f.type + ' name or number'];
  if (f.type === 'bool') return typeof v === 'boolean' ? [] : [where + ' must be true or false'];
  if (f.type === 'string') return typeof v === 'string' ? [] : [where + ' must be a string'];
  if (f.type === 'bytes') return typeof v === 'string' && /^[A-Za-z0-9+/=_-]*$/.test(v) ? [] : [where + ' must be base64 text'];
  if (f.type === 'float' || f.type === 'double') return typeof v === 'number' ? [] : [where + ' must be a number'];
  const unsigned = f.type.startsWith('u') || f.type.startsWith('fixed');
  const ok = (Number.isInteger(v) || (LONGS.includes(f.type) && typeof v === 'string' && /^-?\\d+$/.test(v))) && !(unsigned && Number(v) < 0);
  if (!ok) return [where + ' must be ' + (unsigned ? 'a non-negative ' : 'an ') + 'integer (' + f.type + ')'];
  if (INTS.includes(f.type) && (unsigned ? Number(v) > 4294967295 : Math.abs(Number(v)) > 2147483647)) return [where + ' is out of ' + f.type + ' range'];
  return [];
}
function problems() {
  const m = methods[Number($('x-method').value)];
  if (!m) return ['no method to call'];
  let v;
  try { v = JSON.parse($('x-request').value || '{}'); } catch (e) { return ['not JSON: ' + e.message]; }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return ['the request must be a JSON object (' + m.method.requestType + ')'];
  const out = [];
  for (const [k, value] of Object.entries(v)) {
    const f = m.method.requestFields.find((x) => x.name === k);
    if (!f) { out.push('unknown field "' + k + '": ' + m.method.requestType + ' has ' + (m.method.requestFields.map((x) => x.name).join(', ') || 'no fields')); continue; }
    if (value === null) continue;
    if (f.repeated) { if (!Array.isArray(value)) out.push(k + ' must be a list'); else value.forEach((x, i) => out.push(...checkValue(f, x, k + '[' + i + ']'))); }
    else out.push(...checkValue(f, value, k));
  }
  return out;
}
// The request's values against the buf.validate rules the catalog shows (a note: the service's
// validate middleware, when on, decides; a call that breaks them can still be sent to see it refuse).
function ruleNotes() {
  const m = methods[Number($('x-method').value)];
  let v;
  try { v = JSON.parse($('x-request').value || '{}'); } catch { return []; }
  if (!m || v === null || typeof v !== 'object' || Array.isArray(v)) return [];
  const out = [];
  for (const f of m.method.requestFields) {
    if (!f.rules || f.repeated || f.kind !== 'scalar' || f.type === 'bytes') continue;
    const value = v[f.name];
    for (const text of f.rules) {
      const at = text.indexOf(': '); const rule = text.slice(0, at); let limit;
      try { limit = JSON.parse(text.slice(at + 2)); } catch { continue; }
      const broken = ruleBroken(rule, limit, value);
      if (broken) out.push(f.name + ' ' + broken + ' (' + text + ')');
    }
  }
  return out;
}
function ruleBroken(rule, limit, value) {
  if (rule === 'required') return limit === true && (value === undefined || value === null || value === '' || value === 0 || value === '0' || value === false) ? 'is required' : '';
  if (value === undefined || value === null) return '';
  if (typeof value === 'string' && ['min_len', 'max_len', 'len', 'pattern', 'prefix', 'suffix', 'contains'].includes(rule)) {
    const n = Array.from(value).length;
    if (rule === 'min_len') return n < limit ? 'is shorter than ' + limit : '';
    if (rule === 'max_len') return n > limit ? 'is longer than ' + limit : '';
    if (rule === 'len') return n !== limit ? 'is not ' + limit + ' long' : '';
    if (rule === 'prefix') return !value.startsWith(limit) ? 'does not start with ' + JSON.stringify(limit) : '';
    if (rule === 'suffix') return !value.endsWith(limit) ? 'does not end with ' + JSON.stringify(limit) : '';
    if (rule === 'contains') return !value.includes(limit) ? 'does not contain ' + JSON.stringify(limit) : '';
    try { return new RegExp(limit, 'u').test(value) ? '' : 'does not match ' + limit; } catch { return ''; }
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (Number.isNaN(n) || typeof limit !== 'number') return '';
  if (rule === 'gt') return n <= limit ? 'must be > ' + limit : '';
  if (rule === 'gte') return n < limit ? 'must be ≥ ' + limit : '';
  if (rule === 'lt') return n >= limit ? 'must be < ' + limit : '';
  if (rule === 'lte') return n > limit ? 'must be ≤ ' + limit : '';
  if (rule === 'const') return n !== limit ? 'must be ' + limit : '';
  return '';
}
function validate() {
  const notes = ruleNotes();
  $('x-rules').textContent = notes.length ? 'breaks its validation rules: ' + notes.join('; ') : '';
  const p = problems();
  $('x-problems').textContent = p.join('\\n');
  $('x-send').disabled = p.length > 0;
  return p.length === 0;
}
function pick() {
  const m = methods[Number($('x-method').value)];
  if (!m) return;
  const req = {};
  for (const f of m.method.requestFields) req[f.name] = sample(f);
  $('x-request').value = JSON.stringify(req, null, 2);
  validate();
}
function metadata() {
  const out = {};
  for (const line of $('x-metadata').value.split('\\n')) {
    const i = line.indexOf(':');
    if (line.trim() === '' || i < 1) continue;
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
const pretty = (o) => Object.entries(o).map(([k, v]) => k + ': ' + v).join('\\n');
async function send() {
  if (!validate()) return;
  const m = methods[Number($('x-method').value)];
  $('x-messages').textContent = ''; $('x-headers').textContent = ''; $('x-trailers').textContent = '';
  $('x-status').textContent = 'calling ' + m.method.path + '…'; $('x-status').className = 'muted';
  $('x-state').textContent = '';
  const body = { service: m.service, entry: m.entry, method: m.method.path, request: JSON.parse($('x-request').value || '{}'), metadata: metadata() };
  const res = await fetch('/api/call', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) { const e = await res.json().catch(() => ({ error: 'HTTP ' + res.status })); $('x-status').textContent = e.error; $('x-status').className = 'error'; return; }
  const reader = res.body.getReader(); const decoder = new TextDecoder(); let buf = ''; let count = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\\n')) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl)); buf = buf.slice(nl + 1);
      if (ev.headers) $('x-headers').textContent = pretty(ev.headers);
      if ('message' in ev) { count++; const pre = el('pre', JSON.stringify(ev.message, null, 2), 'message'); $('x-messages').append(pre); $('x-state').textContent = count + ' message' + (count === 1 ? '' : 's'); }
      if (ev.status) {
        $('x-status').textContent = ev.status.name + ' (' + ev.status.code + ')' + (ev.status.details ? ': ' + ev.status.details : '') + ' in ' + ev.elapsedMs + ' ms';
        $('x-status').className = ev.status.code === 0 ? 'ok' : 'error';
        $('x-trailers').textContent = pretty(ev.trailers);
      }
    }
  }
}
$('x-method').addEventListener('change', pick);
$('x-request').addEventListener('input', validate);
$('x-send').addEventListener('click', () => { send().catch((e) => { $('x-status').textContent = String(e); $('x-status').className = 'error'; }); });

// ---- live calls ----
let source;
function listen() {
  if (source) source.close();
  $('calls').textContent = '';
  const q = new URLSearchParams();
  for (const k of ['service', 'method', 'status', 'requestId']) { const v = $('f-' + k).value.trim(); if (v) q.set(k, v); }
  source = new EventSource('/api/records?' + q);
  source.addEventListener('record', (ev) => {
    const r = JSON.parse(ev.data); const rec = r.record; const ids = rec.ids || {};
    let trace = '';
    if (ids.traceId) { trace = el('a', ids.traceId.slice(0, 8) + '…', 'trace'); trace.href = '#trace/' + encodeURIComponent(ids.traceId); }
    const tr = row([rec.endTime, r.service, rec.app && rec.app.entryName, rec.operation, rec.resCode,
      typeof rec.elapsedNano === 'number' ? (rec.elapsedNano / 1e6).toFixed(1) : '', ids.requestId, trace], r.status === 'error' ? 'error call' : 'call');
    tr.dataset.service = r.service; tr.dataset.operation = rec.operation || '';
    $('calls').prepend(tr);
    while ($('calls').children.length > 500) $('calls').lastChild.remove();
  });
}
$('filters').addEventListener('change', listen);
$('filters').addEventListener('submit', (e) => { e.preventDefault(); listen(); });

// ---- traces ----
async function loadTraces() {
  const { traces } = await (await fetch('/api/traces')).json();
  const body = $('traces-list'); body.textContent = '';
  for (const t of traces) {
    const a = el('a', t.traceId); a.href = '#trace/' + encodeURIComponent(t.traceId);
    body.append(row([t.startTime, t.service + ' ' + t.operation, t.services.join(', '), t.records, t.spans, t.errors, t.durationMs, a], t.errors ? 'error' : ''));
  }
}
async function loadTrace(id) {
  const root = $('trace');
  const res = await fetch('/api/traces/' + encodeURIComponent(id));
  const t = await res.json();
  root.textContent = '';
  if (res.status !== 200) { root.append(el('p', t.error, 'error')); return; }
  const services = [...new Set(t.records.map((s) => s.service).concat(t.spans.map((s) => s.service)))];
  root.append(el('h3', 'Trace ' + t.traceId), el('p', t.records.length + ' call records and ' + t.spans.length + ' spans in ' + services.join(', ') + ', ' + t.durationMs + ' ms from ' + t.startTime, 'muted'));
  const total = Math.max(t.durationMs, 0.01);
  const lane = (offset, ms, failed, title) => {
    const l = el('div', undefined, 'lane'); l.style.minWidth = '20rem';
    const bar = el('div', undefined, 'bar' + (failed ? ' error' : ''));
    bar.style.left = (100 * offset / total) + '%'; bar.style.width = Math.max(0.5, 100 * ms / total) + '%';
    bar.title = title + ' ' + ms + ' ms'; l.append(bar); return l;
  };
  if (t.spans.length) {
    root.append(el('h3', 'Spans (sent by the services’ tracers)'));
    const table = el('table', undefined, 'waterfall'); const body = el('tbody');
    table.append(el('thead')); table.firstChild.append(row(['service', 'span', 'kind', 'ms', '']));
    for (const s of t.spans) {
      const name = el('span', s.name); name.style.paddingLeft = (s.depth * 1.2) + 'em';
      const tr = row([s.service, name, s.kind, s.durationMs, lane(s.offsetMs, s.durationMs, s.error, s.name)], 'otel' + (s.error ? ' error' : ''));
      tr.dataset.service = s.service; tr.dataset.depth = String(s.depth); body.append(tr);
    }
    table.append(body); root.append(table);
  }
  root.append(el('h3', 'Call records'));
  const table = el('table', undefined, 'waterfall'); const body = el('tbody');
  table.append(el('thead')); table.firstChild.append(row(['service', 'entry', 'operation', 'code', 'ms', '']));
  for (const s of t.records) {
    const tr = row([s.service, s.entry + ' (' + s.entryType + ')', s.operation, s.resCode, s.durationMs, lane(s.offsetMs, s.durationMs, s.status === 'error', s.operation)], 'span' + (s.status === 'error' ? ' error' : ''));
    tr.dataset.service = s.service; body.append(tr);
  }
  table.append(body); root.append(table);
}

// ---- graph ----
const SVG = 'http://www.w3.org/2000/svg';
const svgEl = (tag, attrs, text) => { const e = document.createElementNS(SVG, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v)); if (text !== undefined) e.textContent = text; return e; };
async function loadGraph() {
  const g = await (await fetch('/api/graph')).json();
  const names = g.nodes.map((n) => n.name);
  for (const e of g.edges) if (!names.includes(e.to)) names.push(e.to);
  // Columns by depth along the edges: callers left of the services they call.
  const depth = Object.fromEntries(names.map((n) => [n, 0]));
  for (let i = 0; i < names.length; i++) for (const e of g.edges) if (depth[e.to] <= depth[e.from]) depth[e.to] = depth[e.from] + 1;
  const columns = {}; for (const n of names) (columns[depth[n]] = columns[depth[n]] || []).push(n);
  const pos = {}; const W = 170, H = 54;
  for (const [d, list] of Object.entries(columns)) list.forEach((n, i) => { pos[n] = { x: 30 + Number(d) * 420, y: 30 + i * 110 }; });
  const svg = $('graph-svg'); svg.textContent = '';
  const height = 60 + Math.max(...Object.values(columns).map((l) => l.length)) * 110;
  svg.setAttribute('height', String(height));
  const defs = svgEl('defs', {}); const marker = svgEl('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto-start-reverse' });
  marker.append(svgEl('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#6b7280' })); defs.append(marker); svg.append(defs);
  for (const e of g.edges) {
    const a = pos[e.from], b = pos[e.to];
    const grp = svgEl('g', { class: 'edge', 'data-from': e.from, 'data-to': e.to });
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    grp.append(svgEl('line', { x1, y1, x2, y2, stroke: e.errors ? '#dc2626' : '#6b7280', 'stroke-width': 1.5, 'marker-end': 'url(#arrow)', 'stroke-dasharray': e.internal ? '' : '4 3' }));
    grp.append(svgEl('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 24, 'text-anchor': 'middle' }, e.kind + '[' + e.client + ']'));
    grp.append(svgEl('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 8, 'text-anchor': 'middle', fill: e.errors ? '#dc2626' : '#374151' }, e.calls + (e.calls === 1 ? ' call' : ' calls') + ' · ' + e.errors + (e.errors === 1 ? ' error' : ' errors') + ' · ' + e.perMinute + '/min'));
    svg.append(grp);
  }
  const byName = Object.fromEntries(g.nodes.map((n) => [n.name, n]));
  for (const n of names) {
    const p = pos[n]; const node = byName[n];
    const grp = svgEl('g', { class: 'node', 'data-name': n });
    grp.append(svgEl('rect', { x: p.x, y: p.y, width: W, height: H, rx: 6, fill: node ? (node.pid ? '#ecfdf5' : '#fef2f2') : '#f9fafb', stroke: node ? (node.pid ? '#047857' : '#b91c1c') : '#9ca3af', 'stroke-dasharray': node ? '' : '4 3' }));
    grp.append(svgEl('text', { x: p.x + 10, y: p.y + 20, 'font-weight': 'bold' }, n.length > 24 ? n.slice(0, 23) + '…' : n));
    grp.append(svgEl('text', { x: p.x + 10, y: p.y + 40, fill: '#374151' }, node ? (node.pid ? 'pid ' + node.pid + ' · ' + node.calls + (node.calls === 1 ? ' call' : ' calls') : 'not running') : 'outside svc dev'));
    svg.append(grp);
  }
  const body = $('graph-nodes'); body.textContent = '';
  for (const n of g.nodes) body.append(row([n.name, n.pid ? 'running (pid ' + n.pid + ')' : 'not running', n.calls, n.perMinute, n.errors, n.p50Ms, n.p95Ms], n.pid ? '' : 'error'));
}

loadCatalog().catch((err) => { $('catalog').textContent = String(err); }).then(() => { listen(); show(); loadLog(); });
</script>
</body>
</html>
`;
