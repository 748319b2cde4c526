// The dashboard's page, served as three files so that its Content-Security-Policy can forbid
// inline script and style. Everything shown comes from cluster objects, some of them written by
// peers: the script puts it on the page as text only (textContent), never as markup.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cluster-registry</title>
<link rel="stylesheet" href="app.css">
<script src="app.js" defer></script>
</head>
<body>
<header>
  <h1>cluster-registry</h1>
  <p>The group as <strong id="viewer">…</strong> sees it. <span id="connection" data-state="connecting">connecting</span> <span id="updated"></span></p>
</header>
<div id="problems" hidden></div>
<p id="hint" hidden></p>
<section>
  <h2>Members <span class="count" id="members-count"></span></h2>
  <table id="members">
    <thead><tr><th>Name</th><th>Type</th><th>State</th><th>Synced</th><th>Version</th><th>Controller</th><th>Provider</th><th>Distribution</th><th>Region</th><th>Last check</th><th>Message</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
<section>
  <h2>Rules <span class="count" id="rules-count"></span></h2>
  <table id="rules">
    <thead><tr><th>Rule / peer</th><th>Kind</th><th>State</th><th>Matched</th><th>Synced</th><th>Failed</th><th>Last sync</th><th>Message / last error</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
<section>
  <h2>Features <span class="count" id="features-count"></span></h2>
  <table id="features">
    <thead><tr><th>Name</th><th>Feature</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
</body>
</html>
`;

export const PAGE_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; background: #fafbfc; }
h1 { font-size: 1.4rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.count { color: #6b7280; font-weight: normal; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; }
td { overflow-wrap: break-word; }
td[data-state], td[data-field="matched"], td[data-field="synced"], td[data-field="failed"], td[data-field="lastCheck"], td[data-field="lastSyncTime"] { white-space: nowrap; }
tr.peer td:first-child { padding-left: 1.8rem; color: #4b5563; }
tr.empty td { color: #6b7280; font-style: italic; }
[data-state] { font-weight: 600; }
[data-state="Ready"], [data-state="Synced"], [data-state="Active"], [data-state="True"], [data-state="live"] { color: #15803d; }
[data-state="NotReady"], [data-state="Errors"], [data-state="Denied"], [data-state="Invalid"], [data-state="Failed"], [data-state="False"], [data-state="disconnected"] { color: #b91c1c; }
[data-state="Pending"], [data-state="Unknown"], [data-state="connecting"], [data-state="paused"] { color: #b45309; }
#problems { border: 1px solid #fca5a5; background: #fef2f2; color: #991b1b; padding: .5rem .8rem; margin: 1rem 0; white-space: pre-wrap; }
#hint { border: 1px solid #fcd34d; background: #fffbeb; padding: .5rem .8rem; }
`;

export const PAGE_JS = `'use strict';
const $ = (id) => document.getElementById(id);

function row(tbody, cells, attrs) {
  const tr = document.createElement('tr');
  for (const [k, v] of Object.entries(attrs || {})) tr.setAttribute(k, v);
  for (const c of cells) {
    const td = document.createElement('td');
    const text = typeof c === 'object' ? c.text : c;
    td.textContent = text === '' || text === undefined ? '-' : String(text);
    if (typeof c === 'object') {
      td.dataset.field = c.field;
      if (c.state) td.dataset.state = c.text;
    }
    tr.appendChild(td);
  }
  tbody.appendChild(tr);
}

/** A table's rows, or in their place why there are none: no such objects, or the cache is not readable or not loaded. */
function fill(id, items, draw, empty, source) {
  const table = $(id);
  const tbody = table.tBodies[0];
  tbody.replaceChildren();
  if (items.length === 0) {
    const why = source.error ? 'not readable: ' + source.error : source.synced ? empty : 'loading…';
    row(tbody, [why], { class: 'empty' });
    tbody.rows[0].cells[0].colSpan = table.tHead.rows[0].cells.length;
  } else for (const it of items) draw(tbody, it);
  $(id + '-count').textContent = '(' + items.length + ')';
}

function render(v) {
  $('viewer').textContent = v.view.viewer;
  $('updated').textContent = 'updated ' + new Date(v.at).toLocaleTimeString();
  const problems = v.sources.filter((s) => s.error || !s.synced).map((s) => s.resource + ': ' + (s.error || 'loading'));
  $('problems').hidden = problems.length === 0;
  $('problems').textContent = problems.join('\\n');
  $('hint').hidden = !v.view.hint;
  $('hint').textContent = v.view.hint;
  fill('members', v.view.clusters, (tb, c) => row(tb, [
    { field: 'name', text: c.name }, { field: 'type', text: c.type }, { field: 'state', text: c.state, state: true },
    { field: 'synced', text: c.synced, state: true }, c.version, c.controller, c.provider, c.distribution, c.region, { field: 'lastCheck', text: c.lastCheck },
    { field: 'message', text: c.message },
  ], { 'data-cluster': c.name }), 'no Cluster here yet', v.sources[0]);
  fill('rules', v.view.rules, (tb, r) => {
    row(tb, [
      { field: 'name', text: r.name }, { field: 'kind', text: r.kind }, { field: 'state', text: r.state, state: true },
      { field: 'matched', text: r.matched }, { field: 'synced', text: r.synced }, { field: 'failed', text: r.failed }, '',
      { field: 'message', text: r.message },
    ], { 'data-rule': r.name });
    for (const p of r.peers) row(tb, [
      { field: 'peer', text: 'from ' + p.name }, '', { field: 'state', text: p.state, state: true },
      { field: 'matched', text: p.matched }, { field: 'synced', text: p.synced }, { field: 'failed', text: p.failed }, { field: 'lastSyncTime', text: p.lastSyncTime },
      { field: 'message', text: [p.message, p.lastError].filter(Boolean).join(' / ') },
    ], { class: 'peer', 'data-rule': r.name, 'data-peer': p.name });
  }, 'no ResourceSyncRule here', v.sources[1]);
  fill('features', v.view.features, (tb, f) => row(tb, [{ field: 'name', text: f.name }, { field: 'featureName', text: f.featureName }], { 'data-feature': f.name }), 'no ClusterFeature here', v.sources[2]);
}

const status = (s) => { $('connection').textContent = s; $('connection').dataset.state = s; };

// The access token: taken from the URL the dashboard printed (and then off the address bar), kept
// in this tab's sessionStorage, which only pages of this origin (this port included) can read.
const TOKEN_KEY = 'cluster-registry-dashboard-token';
const token = (() => {
  const given = new URLSearchParams(location.search).get('token');
  if (given) history.replaceState(null, '', location.pathname);
  try {
    if (given) sessionStorage.setItem(TOKEN_KEY, given);
    return sessionStorage.getItem(TOKEN_KEY) || given || '';
  } catch {
    return given || '';
  }
})();

function noAccess() {
  status('disconnected');
  $('problems').hidden = false;
  $('problems').textContent = 'This page has no valid access token: open the URL that cluster-registry dashboard printed.';
}

/** One Server-Sent Event: its type and data lines. */
function dispatch(block) {
  let type = 'message';
  const data = [];
  for (const line of block.split('\\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (type !== 'view' || data.length === 0) return;
  retryMs = 1000;
  status('live');
  render(JSON.parse(data.join('\\n')));
}

let stream;
let retryMs = 1000;

// The event stream, read through fetch: EventSource cannot send the token in a header.
async function connect() {
  if (stream) stream.abort();
  const mine = new AbortController();
  stream = mine;
  try {
    const res = await fetch('api/events', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', signal: mine.signal });
    if (res.status === 401) return noAccess();
    if (res.ok && res.body) {
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let pending = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += value;
        for (let end = pending.indexOf('\\n\\n'); end >= 0; end = pending.indexOf('\\n\\n')) {
          dispatch(pending.slice(0, end));
          pending = pending.slice(end + 2);
        }
      }
    }
  } catch {
    // The stream broke or could not be opened: retried below, unless it was closed on purpose.
  }
  if (mine.signal.aborted) return;
  // Until the stream is back, what is shown may be old.
  status('disconnected');
  setTimeout(() => { if (stream === mine && !document.hidden) connect(); }, retryMs);
  retryMs = Math.min(retryMs * 2, 30000);
}

// A hidden tab gives its connection back: browsers allow a few per server, and other tabs need them.
document.addEventListener('visibilitychange', () => {
  if (document.hidden) { if (stream) stream.abort(); status('paused'); } else connect();
});

connect();
`;
