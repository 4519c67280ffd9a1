/*
 * The dashboard's one page, written here and shipped in the package (no CDN, no framework): the
 * catalog from /api/catalog and the live records from /api/records (EventSource), filtered by
 * service and status. Every value from a service is set as text, never as HTML.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc dev</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1rem 2rem; color: #222; }
  h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; }
  table { border-collapse: collapse; width: 100%; }
  td, th { text-align: left; padding: 2px 8px; border-bottom: 1px solid #ddd; font-family: ui-monospace, monospace; font-size: 12px; }
  .error { color: #b00020; } .muted { color: #777; }
  section.service { margin-bottom: 1rem; }
</style>
</head>
<body>
<h1>svc dev</h1>
<h2>Catalog</h2>
<div id="catalog" class="muted">loading…</div>
<h2>Live calls</h2>
<form id="filters">
  <label>service <select id="service"><option value="">all</option></select></label>
  <label>status <select id="status"><option value="">all</option><option value="ok">ok</option><option value="error">error</option></select></label>
</form>
<table><thead><tr><th>time</th><th>service</th><th>entry</th><th>operation</th><th>code</th><th>ms</th><th>request id</th></tr></thead>
<tbody id="calls"></tbody></table>
<script>
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
async function loadCatalog() {
  const res = await fetch('/api/catalog');
  const { services } = await res.json();
  const root = document.getElementById('catalog');
  root.textContent = ''; root.className = '';
  const select = document.getElementById('service');
  for (const s of services) {
    const opt = el('option', s.name); opt.value = s.name; select.append(opt);
    const sec = el('section', undefined, 'service');
    sec.append(el('h3', s.name));
    const list = el('ul');
    for (const e of s.entries) {
      const li = el('li', e.kind + ' ' + e.name + (e.port ? ' (port ' + e.port + ')' : ''));
      if (e.problem) li.append(el('div', e.problem, 'muted'));
      for (const svc of e.services) {
        const ul = el('ul');
        for (const m of svc.methods)
          ul.append(el('li', m.path + '  (' + (m.clientStreaming ? 'stream ' : '') + m.requestType + ') → (' + (m.serverStreaming ? 'stream ' : '') + m.responseType + ')'));
        const inner = el('li', svc.name); inner.append(ul); li.append(inner);
      }
      list.append(li);
    }
    sec.append(list); root.append(sec);
  }
}
let source;
function listen() {
  if (source) source.close();
  document.getElementById('calls').textContent = '';
  const q = new URLSearchParams();
  for (const k of ['service', 'status']) { const v = document.getElementById(k).value; if (v) q.set(k, v); }
  source = new EventSource('/api/records?' + q);
  source.addEventListener('record', (ev) => {
    const r = JSON.parse(ev.data); const rec = r.record;
    const tr = el('tr', undefined, r.status === 'error' ? 'error' : '');
    const cells = [rec.endTime, r.service, rec.app && rec.app.entryName, rec.operation, rec.resCode,
      typeof rec.elapsedNano === 'number' ? (rec.elapsedNano / 1e6).toFixed(1) : '', rec.ids && rec.ids.requestId];
    for (const c of cells) tr.append(el('td', c === undefined ? '' : c));
    document.getElementById('calls').prepend(tr);
  });
}
document.getElementById('filters').addEventListener('change', listen);
loadCatalog().then(listen, (err) => { document.getElementById('catalog').textContent = String(err); listen(); });
</script>
</body>
</html>
`;
