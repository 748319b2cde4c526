// The dashboard's page, served as three files so that its Content-Security-Policy can forbid
// inline script and style. Everything shown comes from cluster objects, some of them written by
// peers: the script puts it on the page as text only (textContent, and setAttribute on elements
// it makes itself, the picture's SVG included), never as markup.
import type { ViewState } from '../group-graph.ts';

/** Every state an arrow of the picture may have, in the legend's words. */
const LEGEND: Record<ViewState, string> = {
  Ready: 'Ready',
  Unreachable: 'unreachable',
  CredentialsInvalid: 'credentials invalid or refused',
  NotSynced: 'not synced: no entry of it, or another name',
  NotReady: 'not Ready for another reason',
  Disabled: 'disabled',
  Unknown: 'unknown: not observable from here',
};

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
  <h2>Who sees whom</h2>
  <p class="note">An arrow from A to B is A's view of B. Arrows from this cluster (the filled circle) are its own; the others are each peer's view as this cluster's controller last read it from that peer, unknown while it cannot. Point at an arrow for why.</p>
  <div id="graph"></div>
  <p class="note" id="graph-omitted" hidden></p>
  <ul class="legend">
${Object.entries(LEGEND).map(([state, label]) => `    <li><span class="view" data-state="${state}"></span>${label}</li>\n`).join('')}  </ul>
  <p class="note">Views not Ready <span class="count" id="views-count"></span></p>
  <table id="views">
    <thead><tr><th>From</th><th>To</th><th>State</th><th>Why</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
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
    <thead><tr><th>Rule / peer</th><th>Kind</th><th>State</th><th>Matched</th><th>Synced</th><th>Failed</th><th>Drifted</th><th>Last sync</th><th>Message / last error</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
<section id="tracing" hidden>
  <h2>Trace <span class="count" id="trace-what"></span></h2>
  <p class="note">Pick an object of the rule: its source, and every member with its copy or why it has none. This cluster is judged first-hand; its peers are read with the credentials it holds for them, as <code>cluster-registry trace</code> reads them.</p>
  <ul id="rule-objects"></ul>
  <p id="trace-status"></p>
  <p id="trace-source"></p>
  <table id="trace" hidden>
    <thead><tr><th>Member</th><th>Seen</th><th>Object</th><th>Rule</th><th>State</th><th>From version</th><th>Last write</th><th>Why</th></tr></thead>
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
td[data-state], td[data-field="matched"], td[data-field="synced"], td[data-field="failed"], td[data-field="drifted"], td[data-field="lastCheck"], td[data-field="lastSyncTime"] { white-space: nowrap; }
tr.peer td:first-child { padding-left: 1.8rem; color: #4b5563; }
tr.empty td { color: #6b7280; font-style: italic; }
[data-state] { font-weight: 600; }
[data-state="Ready"], [data-state="Synced"], [data-state="Active"], [data-state="True"], [data-state="live"] { color: #15803d; }
[data-state="NotReady"], [data-state="Errors"], [data-state="Denied"], [data-state="Invalid"], [data-state="Failed"], [data-state="False"], [data-state="disconnected"], [data-state="Unreachable"], [data-state="CredentialsInvalid"] { color: #b91c1c; }
[data-state="Pending"], [data-state="Unknown"], [data-state="connecting"], [data-state="paused"], [data-state="NotSynced"] { color: #b45309; }
.note { color: #4b5563; margin: 0 0 .5rem; }
#graph svg { display: block; width: 100%; max-width: 720px; height: auto; background: #fff; border: 1px solid #e5e7eb; }
#graph .edge { fill: none; stroke: currentColor; stroke-width: 1.8; }
#graph .edge:hover { stroke-width: 4; }
#graph .edge[data-state="Ready"] { stroke-width: 1.2; stroke-opacity: .7; }
#graph .edge[data-state="Unknown"] { stroke-dasharray: 5 4; }
#graph marker path { fill: currentColor; }
#graph .node circle { fill: #fff; stroke: #1d2330; stroke-width: 2; }
#graph .node[data-local] circle { fill: #1d2330; }
#graph .node text { font-size: 13px; fill: #1d2330; }
#graph p.empty { color: #6b7280; font-style: italic; }
.legend { list-style: none; padding: 0; margin: .5rem 0; display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
.legend .view { display: inline-block; width: 1.6rem; height: 4px; margin-right: .4rem; vertical-align: middle; background: currentColor; }
.view[data-state="Ready"] { color: #16a34a; }
.view[data-state="Unreachable"] { color: #dc2626; }
.view[data-state="CredentialsInvalid"] { color: #9333ea; }
.view[data-state="NotSynced"] { color: #d97706; }
.view[data-state="NotReady"] { color: #db2777; }
.view[data-state="Disabled"] { color: #4b5563; }
.view[data-state="Unknown"] { color: #9ca3af; }
button.pick { margin-left: .5rem; font-size: .8rem; padding: 0 .4rem; }
#rule-objects { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem; }
#rule-objects button { font: 13px/1.4 ui-monospace, monospace; }
#rule-objects button[aria-pressed="true"] { background: #1d2330; color: #fff; }
#trace-status[data-outcome="in sync"] { color: #15803d; }
#trace-status[data-outcome="differs"], #trace-status[data-outcome="failed"] { color: #b91c1c; }
#trace-status[data-outcome="incomplete"] { color: #b45309; }
#trace [data-state="in sync"], #trace [data-state="source"], #trace [data-state="gone"] { color: #15803d; }
#trace [data-state="drifted"], #trace [data-state="differs"], #trace [data-state="absent"], #trace [data-state="blocked"], #trace [data-state="stale"] { color: #b91c1c; }
#trace [data-state="not read"], #trace [data-state="not judged"] { color: #b45309; }
tr.diff pre { margin: 0; white-space: pre-wrap; font: 12px/1.3 ui-monospace, monospace; }
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

const SVG_NS = 'http://www.w3.org/2000/svg';
// The states an arrow may have; anything else is drawn as Unknown.
const VIEW_STATES = ${JSON.stringify(Object.keys(LEGEND))};
const PICTURE = { width: 720, height: 460, radius: 170 };

function svg(parent, tag, attrs) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, typeof v === 'number' ? v.toFixed(1) : v);
  parent.appendChild(el);
  return el;
}

/** The views sent (those not Ready), and Ready for each other view of a member all of whose views not Ready were sent. */
function views(g) {
  const pair = (from, to) => JSON.stringify([from, to]);
  const sent = new Set(g.edges.map((e) => pair(e.from, e.to)));
  const all = [...g.edges];
  for (const from of g.nodes) {
    if (!from.allViews) continue;
    for (const to of g.nodes) if (to !== from && !sent.has(pair(from.name, to.name))) all.push({ from: from.name, to: to.name, state: 'Ready', reason: '' });
  }
  return all;
}

// A frame comes on every change of the caches, heartbeats included: the picture is drawn again
// only when what it shows changed.
let drawnGraph = '';

/**
 * The members on a circle, and each one's view of each other one as an arrow in its state's
 * colour. The two arrows of a pair bow to either side of the line between them (each to its own
 * left), so a one-sided failure shows as one arrow of a pair.
 */
function drawGraph(g, source) {
  const shown = JSON.stringify([g, source]);
  if (shown === drawnGraph) return;
  drawnGraph = shown;
  const box = $('graph');
  box.replaceChildren();
  const n = g.nodes.length;
  $('graph-omitted').hidden = n === 0 || !g.omitted;
  $('graph-omitted').textContent = g.omitted;
  if (n === 0) {
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = g.omitted || (source.error ? 'not readable: ' + source.error : source.synced ? 'no Cluster here yet' : 'loading…');
    box.appendChild(p);
    return;
  }
  const { width, height } = PICTURE;
  const radius = n === 1 ? 0 : PICTURE.radius;
  const r = n === 1 ? 16 : Math.max(5, Math.min(16, (Math.PI * radius) / n / 2));
  const root = svg(box, 'svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': "each member's view of each other member" });
  const defs = svg(root, 'defs');
  for (const state of VIEW_STATES) {
    const marker = svg(defs, 'marker', { id: 'arrow-' + state, viewBox: '0 0 10 10', refX: '8', refY: '5', markerWidth: '6', markerHeight: '6', orient: 'auto' });
    svg(marker, 'path', { d: 'M0,0 L10,5 L0,10 z', class: 'view', 'data-state': state });
  }
  const at = new Map(g.nodes.map((node, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return [node.name, { x: width / 2 + radius * Math.cos(angle), y: height / 2 + radius * Math.sin(angle), angle }];
  }));
  const arrows = svg(root, 'g');
  // Problems are drawn last, over the Ready arrows of a large group.
  const layer = (e) => (e.state === 'Ready' ? 0 : e.state === 'Unknown' ? 1 : 2);
  for (const e of views(g).sort((a, b) => layer(a) - layer(b))) {
    const p = at.get(e.from);
    const q = at.get(e.to);
    if (!p || !q) continue;
    const length = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    const [ux, uy] = [(q.x - p.x) / length, (q.y - p.y) / length];
    // The arrow's left, which is the other arrow's right.
    const [lx, ly] = [uy, -ux];
    const bow = Math.min(40, length * 0.15);
    // Each end leaves its circle a little to the bowed side.
    const [c, s] = [Math.cos(0.5), Math.sin(0.5)];
    const start = [p.x + r * (ux * c + lx * s), p.y + r * (uy * c + ly * s)];
    const end = [q.x + (r + 2) * (-ux * c + lx * s), q.y + (r + 2) * (-uy * c + ly * s)];
    const control = [(p.x + q.x) / 2 + lx * bow * 2, (p.y + q.y) / 2 + ly * bow * 2];
    const state = VIEW_STATES.includes(e.state) ? e.state : 'Unknown';
    const d = 'M' + start.map((v) => v.toFixed(1)).join(',') + ' Q' + control.map((v) => v.toFixed(1)).join(',') + ' ' + end.map((v) => v.toFixed(1)).join(',');
    const path = svg(arrows, 'path', { d, class: 'edge view', 'data-from': e.from, 'data-to': e.to, 'data-state': state, 'marker-end': 'url(#arrow-' + state + ')' });
    svg(path, 'title').textContent = e.from + ' → ' + e.to + ': ' + state + (e.reason ? ': ' + e.reason : '');
  }
  for (const node of g.nodes) {
    const { x, y, angle } = at.get(node.name);
    const group = svg(root, 'g', { class: 'node', 'data-member': node.name });
    if (node.local) group.setAttribute('data-local', '');
    svg(group, 'circle', { cx: x, cy: y, r });
    const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
    const label = svg(group, 'text', {
      x: x + (r + 6) * cos,
      y: y + (r + 6) * sin,
      'text-anchor': cos > 0.3 ? 'start' : cos < -0.3 ? 'end' : 'middle',
      'dominant-baseline': sin > 0.3 ? 'hanging' : sin < -0.3 ? 'auto' : 'middle',
    });
    label.textContent = node.name;
    svg(group, 'title').textContent = node.name + (node.local ? ' (this cluster)' : '') + (node.allViews ? '' : ': not all its views are drawn');
  }
}

function render(v) {
  $('viewer').textContent = v.view.viewer;
  $('updated').textContent = 'updated ' + new Date(v.at).toLocaleTimeString();
  const problems = v.sources.filter((s) => s.error || !s.synced).map((s) => s.resource + ': ' + (s.error || 'loading'));
  $('problems').hidden = problems.length === 0;
  $('problems').textContent = problems.join('\\n');
  $('hint').hidden = !v.view.hint;
  $('hint').textContent = v.view.hint;
  drawGraph(v.graph, v.sources[0]);
  fill('views', v.graph.edges, (tb, e) => row(tb, [
    { field: 'from', text: e.from }, { field: 'to', text: e.to }, { field: 'state', text: e.state, state: true }, { field: 'reason', text: e.reason },
  ], { 'data-from': e.from, 'data-to': e.to }), v.graph.omitted || 'every member sees every other Ready', v.sources[0]);
  fill('members', v.view.clusters, (tb, c) => row(tb, [
    { field: 'name', text: c.name }, { field: 'type', text: c.type }, { field: 'state', text: c.state, state: true },
    { field: 'synced', text: c.synced, state: true }, c.version, c.controller, c.provider, c.distribution, c.region, { field: 'lastCheck', text: c.lastCheck },
    { field: 'message', text: c.message },
  ], { 'data-cluster': c.name }), 'no Cluster here yet', v.sources[0]);
  // Drawn again only when they changed, so that a trace… button stays put under the pointer.
  const rules = JSON.stringify([v.view.rules, v.sources[1], v.tracing]);
  if (rules !== drawnRules) drawRules(v);
  drawnRules = rules;
  fill('features', v.view.features, (tb, f) => row(tb, [{ field: 'name', text: f.name }, { field: 'featureName', text: f.featureName }], { 'data-feature': f.name }), 'no ClusterFeature here', v.sources[2]);
}

let drawnRules = '';

function drawRules(v) {
  fill('rules', v.view.rules, (tb, r) => {
    row(tb, [
      { field: 'name', text: r.name }, { field: 'kind', text: r.kind }, { field: 'state', text: r.state, state: true },
      { field: 'matched', text: r.matched }, { field: 'synced', text: r.synced }, { field: 'failed', text: r.failed }, { field: 'drifted', text: r.drifted }, '',
      { field: 'message', text: r.message },
    ], { 'data-rule': r.name });
    if (v.tracing) {
      const pick = document.createElement('button');
      pick.type = 'button';
      pick.className = 'pick';
      pick.textContent = 'trace…';
      pick.title = 'pick one of its objects here to trace across the group';
      pick.setAttribute('data-rule', r.name);
      tb.lastElementChild.cells[0].appendChild(pick);
    }
    for (const p of r.peers) row(tb, [
      { field: 'peer', text: 'from ' + p.name }, '', { field: 'state', text: p.state, state: true },
      { field: 'matched', text: p.matched }, { field: 'synced', text: p.synced }, { field: 'failed', text: p.failed }, { field: 'drifted', text: p.reverted ? p.drifted + ' (' + p.reverted + ' put back)' : p.drifted }, { field: 'lastSyncTime', text: p.lastSyncTime },
      { field: 'message', text: [p.message, p.lastError].filter(Boolean).join(' / ') },
    ], { class: 'peer', 'data-rule': r.name, 'data-peer': p.name });
  }, 'no ResourceSyncRule here', v.sources[1]);
}

$('rules').addEventListener('click', (e) => {
  const pick = e.target instanceof Element ? e.target.closest('button.pick') : null;
  if (pick) pickRule(pick.getAttribute('data-rule'));
});

// Tracing: the page asks for one thing at a time (a rule's objects, or a trace); a new question
// drops the one before, and the dashboard stops reading for it.
let asking;

/** Traces the dashboard is still running (ones this page gave up on included) make it answer 429: asked again a few times. */
const BUSY_RETRIES = 3;

async function ask(path) {
  if (asking) asking.abort();
  const mine = new AbortController();
  asking = mine;
  let res;
  for (let tries = 0; ; tries++) {
    res = await fetch(path, { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', signal: mine.signal });
    if (res.status !== 429 || tries === BUSY_RETRIES) break;
    traceStatus('the dashboard is busy with other traces: asking again shortly…');
    const wait = Math.min(10, Number(res.headers.get('Retry-After')) || 5) * 1000;
    await new Promise((resolve) => setTimeout(resolve, wait));
    if (mine.signal.aborted) throw new DOMException('asked again', 'AbortError');
  }
  const text = await res.text();
  if (asking !== mine) throw new DOMException('asked again', 'AbortError');
  if (res.status === 401) { noAccess(); throw new Error('no valid access token'); }
  if (!res.ok) throw new Error(text || res.status + ' ' + res.statusText);
  return JSON.parse(text);
}

function traceStatus(text, outcome) {
  $('trace-status').textContent = text;
  if (outcome) $('trace-status').dataset.outcome = outcome; else delete $('trace-status').dataset.outcome;
}

const objectLabel = (o) => o.kind + ' ' + (o.namespace ? o.namespace + '/' : '') + o.name;

async function pickRule(name) {
  $('tracing').hidden = false;
  $('trace-what').textContent = '(rule ' + name + ')';
  $('rule-objects').replaceChildren();
  $('trace').hidden = true;
  $('trace-source').textContent = '';
  traceStatus('listing the objects of rule ' + name + ' here…');
  $('tracing').scrollIntoView({ block: 'nearest' });
  let found;
  try {
    found = await ask('api/rule-objects?rule=' + encodeURIComponent(name));
  } catch (e) {
    if (e.name !== 'AbortError') traceStatus('its objects could not be listed: ' + e.message, 'failed');
    return;
  }
  for (const o of found.objects) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = (o.role === 'copy' ? 'copy ' : 'source ') + objectLabel(o) + (o.from ? ' from ' + o.from : '');
    for (const [k, v] of Object.entries({ 'data-kind': o.kind, 'data-namespace': o.namespace, 'data-name': o.name, 'data-role': o.role, 'aria-pressed': 'false' })) b.setAttribute(k, v);
    b.addEventListener('click', () => {
      for (const other of $('rule-objects').querySelectorAll('button')) other.setAttribute('aria-pressed', String(other === b));
      traceObject(name, o);
    });
    li.appendChild(b);
    $('rule-objects').appendChild(li);
  }
  const notes = found.notes.length ? ' (' + found.notes.join('; ') + ')' : '';
  traceStatus((found.objects.length ? 'pick one to trace' : 'no object of this rule here: none it takes, no copy it made') + notes);
}

const written = (w) => (w ? (w.time || '?') + ' ' + w.manager + (w.operation ? ' (' + w.operation + ')' : '') : '');
const OUTCOMES = { 'in sync': 'no copy is out of sync', differs: 'not every copy is in sync', incomplete: 'some of the group could not be read or judged' };

async function traceObject(rule, o) {
  $('trace').hidden = true;
  $('trace-source').textContent = '';
  traceStatus('tracing ' + objectLabel(o) + ' across the group…');
  let t;
  try {
    t = await ask('api/trace?' + new URLSearchParams({ rule, kind: o.kind, name: o.name, namespace: o.namespace }));
  } catch (e) {
    if (e.name !== 'AbortError') traceStatus('it could not be traced: ' + e.message, 'failed');
    return;
  }
  $('trace-source').textContent = t.source
    ? 'Its source is ' + t.source.object + ' on ' + t.source.member + ', at version ' + t.source.version + '.'
    : 'Its source could not be followed: the row of the member it was copied from says why.';
  const tbody = $('trace').tBodies[0];
  tbody.replaceChildren();
  for (const r of t.rows) {
    const drift = (r.drift || []).map((d) => d.field + (d.manager ? ' by ' + d.manager + (d.time ? ' at ' + d.time : '') : ''));
    row(tbody, [
      { field: 'member', text: r.member }, { field: 'seen', text: r.seen }, { field: 'object', text: r.object }, { field: 'rule', text: r.rule },
      { field: 'state', text: r.state, state: true }, { field: 'sourceVersion', text: r.sourceVersion }, { field: 'lastWrite', text: written(r.lastWrite) },
      { field: 'reason', text: [r.reason, drift.length ? 'drifted: ' + drift.join(', ') : ''].filter(Boolean).join('; ') },
    ], { 'data-member': r.member });
    if (!r.diff) continue;
    const tr = document.createElement('tr');
    tr.className = 'diff';
    tr.setAttribute('data-member', r.member);
    const td = document.createElement('td');
    td.colSpan = $('trace').tHead.rows[0].cells.length;
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = 'what ' + r.member + "'s sync would write";
    const pre = document.createElement('pre');
    pre.textContent = r.diff;
    details.append(summary, pre);
    td.appendChild(details);
    tr.appendChild(td);
    tbody.appendChild(tr);
  }
  $('trace').hidden = false;
  traceStatus((OUTCOMES[t.outcome] || t.outcome) + ' (traced ' + new Date().toLocaleTimeString() + ')', t.outcome);
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
