// perfsim's admin dashboard: polls the admin API (admin/README.md) and draws with Chart.js
// (Debian's libjs-chart.js, served at /chart.js). Plain browser JavaScript, no build step.
//
// What a refresh fetches does not grow with the fleet: /api/fleet's totals with one page of hosts
// (pageSize), the newest sessionRows sessions, the newest journal entries asked for, and the
// selected host. The view (search, filters, page, selected host) lives in the URL's #fragment, so
// a link opens the same view.
'use strict';

const $ = (id) => document.getElementById(id);
const haveChart = typeof Chart !== 'undefined';
const rateHistory = 60;  // points of the live calls/s chart
const pageSize = 50;     // host rows a page
const sessionRows = 20;  // newest sessions shown
let rateChart = null, seriesChart = null;
let selectedHost = null;                // the host's JSON (GET /api/hosts/NAME) while one is selected
let seriesPoints = [];                  // the plotted counter's points ({tick, t, value})
const view = {q: '', profile: '', state: '', order: 'failing', offset: 0, host: ''};
const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const color = (i) => palette[i % palette.length];

function banner(kind, text) {
  const d = document.createElement('div');
  d.className = 'banner ' + kind;
  d.textContent = text;
  $('status').appendChild(d);
  return d;
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.appendChild(td);
  return td;
}

// One refresh's API traffic, as the page received it: requests and body bytes (UTF-8).
const traffic = {requests: 0, bytes: 0};

async function getJson(url) {
  const r = await fetch(url, {cache: 'no-store'});
  const text = await r.text();
  traffic.requests += 1;
  traffic.bytes += new TextEncoder().encode(text).length;
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    body = {error: 'not JSON'};
  }
  return {status: r.status, body};
}

function lineChart(canvas, yLabel) {
  if (!haveChart) return null;
  return new Chart(canvas, {
    type: 'line',
    data: {labels: [], datasets: []},
    options: {animation: false, responsive: true, maintainAspectRatio: false,
              scales: {y: {beginAtZero: true, title: {display: true, text: yLabel}}}}
  });
}

function timelineText(t) {
  let s = `${t.mode} ${t.position}/${t.samples} (${t.sample_time})`;
  if (t.paused) s += ' paused';
  if (t.speed !== undefined) s += ` x${t.speed}`;
  return s;
}

// The view <-> the URL's fragment (#q=web&state=paused&offset=50&host=WEB-0042); a query string
// (?q=web, what a person types or a link from elsewhere gives) counts too, the fragment over it.
function readView() {
  for (const p of [new URLSearchParams(location.search), new URLSearchParams(location.hash.slice(1))]) {
    for (const k of Object.keys(view)) {
      if (p.has(k)) view[k] = k === 'offset' ? Math.max(0, parseInt(p.get(k), 10) || 0) : p.get(k);
    }
  }
}

function writeView() {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(view)) if (v) p.set(k, v);
  history.replaceState(null, '', location.pathname + '#' + p.toString());
}

function setTotal(id, value, bad) {
  const b = $(id);
  b.textContent = typeof value === 'number' ? value.toLocaleString('en-US') : value;
  b.dataset.value = value;
  if (bad !== undefined) b.parentElement.classList.toggle('bad', bad);
}

// The rate's window as the server measured it (admin/README.md "Figures"; api.cpp rate_label).
function rateLabel(f) {
  const s = f.rate_window_s.toFixed(0);
  return f.rate_since_start ? `calls/s since start (${s} s)` : `calls/s over the last ${s} s`;
}

function showTotals(f) {
  setTotal('total-hosts', f.hosts);
  setTotal('total-calls', f.calls);
  setTotal('total-perf-queries', f.perf_queries);
  $('rate-label').textContent = rateLabel(f);
  $('rate-label').dataset.windowS = f.rate_window_s;
  setTotal('total-rate', f.calls_per_s.toFixed(1));
  setTotal('total-errors', f.errors, f.errors > 0);
  setTotal('total-faults', f.faults, f.faults > 0);
  setTotal('total-failing', f.failing, f.failing > 0);
  setTotal('total-sessions-open', f.sessions_open);
  setTotal('total-sessions-opened', f.sessions_opened);
  setTotal('total-paused', f.paused);
  const select = $('profile');
  const names = Object.keys(f.profiles).filter((p) => p !== '').sort();
  if (select.options.length !== names.length + 1) {
    select.length = 1;
    for (const p of names) select.add(new Option(`${p} (${f.profiles[p]})`, p));
    select.value = view.profile;
  }
}

function showPage(f) {
  const tbody = $('hosts').querySelector('tbody');
  tbody.textContent = '';
  $('host-rate-label').textContent = rateLabel(f);
  for (const h of f.page) {
    const row = document.createElement('tr');
    row.className = 'host' + (h.errors > 0 ? ' failing' : h.faults > 0 ? ' faulted' : '') +
                    (h.id === view.host ? ' selected' : '');
    row.dataset.host = h.id;
    cell(row, h.id).title = h.name === h.id ? h.id : `${h.id} (${h.name})`;
    cell(row, h.addresses.join(' ')).title = h.addresses.join('\n');
    cell(row, h.profile || '-');
    cell(row, timelineText(h.timeline)).title = timelineText(h.timeline);
    const quirks = cell(row, h.quirks.join(' '));
    quirks.className = 'quirks';
    quirks.title = h.quirks.join('\n');
    cell(row, h.calls);
    cell(row, h.calls_per_s.toFixed(1));  // two decimals would not help: 0.2 calls/s reads 0.2
    cell(row, h.sessions_open);
    cell(row, h.errors);
    cell(row, h.faults);
    row.addEventListener('click', () => select(h.id));
    tbody.appendChild(row);
  }
  const last = Math.min(f.offset + f.page.length, f.matched);
  $('page-info').textContent = f.matched ? `${f.offset + 1}-${last} of ${f.matched}` +
                                               (f.matched !== f.hosts ? ` (of ${f.hosts} hosts)` : '')
                                         : `no host matches (of ${f.hosts})`;
  $('prev').disabled = f.offset === 0;
  $('next').disabled = last >= f.matched;
  const table = $('hosts');
  table.dataset.matched = f.matched;
  table.dataset.rows = f.page.length;
  // Cells whose text does not fit (none should: every cell but the quirks is one whole line).
  let cut = 0;
  for (const td of tbody.querySelectorAll('td')) cut += td.scrollWidth > td.clientWidth + 1;
  table.dataset.cutCells = cut;
}

// The calls/s chart: the fleet's total, and the selected host's beside it (not a line a host).
function pushRates(fleetRate, hostRate) {
  if (!rateChart) return;
  const labels = rateChart.data.labels;
  if (!rateChart.data.datasets.length)
    rateChart.data.datasets.push({label: 'fleet calls/s', data: [], pointRadius: 0, borderColor: color(0),
                                  backgroundColor: color(0)});
  labels.push(new Date().toLocaleTimeString());
  rateChart.data.datasets[0].data.push(fleetRate);
  const label = view.host ? `${view.host} calls/s` : null;
  if (rateChart.data.datasets.length > 1 && rateChart.data.datasets[1].label !== label) rateChart.data.datasets.pop();
  if (label && rateChart.data.datasets.length === 1)
    rateChart.data.datasets.push({label, data: new Array(labels.length - 1).fill(null), pointRadius: 0,
                                  borderColor: color(1), backgroundColor: color(1)});
  if (label) rateChart.data.datasets[1].data.push(hostRate);
  if (labels.length > rateHistory) {
    labels.shift();
    for (const ds of rateChart.data.datasets) ds.data.shift();
  }
  rateChart.update();
  $('rate-chart').dataset.lines = rateChart.data.datasets.length;
}

function fleetQuery() {
  const q = new URLSearchParams({q: view.q, profile: view.profile, state: view.state, order: view.order,
                                 offset: view.offset, limit: pageSize});
  return '/api/fleet?' + q;
}

async function pollFleet() {
  const {status, body} = await getJson(fleetQuery());
  if (status !== 200) {
    $('page-info').textContent = body.error;
    return null;
  }
  if (body.matched && view.offset >= body.matched) {  // the page emptied (a filter, hosts gone): back to the last
    view.offset = Math.floor((body.matched - 1) / pageSize) * pageSize;
    writeView();
    return pollFleet();
  }
  return body;
}

async function pollSelected() {
  if (!view.host) return null;
  const {status, body} = await getJson('/api/hosts/' + encodeURIComponent(view.host));
  if (status !== 200) {
    $('detail-info').textContent = body.error;
    return null;
  }
  return body;
}

function showSelected(h) {
  selectedHost = h;
  let rate = null;
  if (h) {
    rate = h.calls_per_s;
    $('detail-info').textContent = `${h.name} on ${h.addresses.join(' ')}, profile ${h.profile || '-'}, ` +
                                   `quirks ${h.quirks.join(' ') || '-'}, ${h.calls} calls, ` +
                                   `timeline ${timelineText(h.timeline)}`;
    markPosition();
  }
  return rate;
}

async function pollSessions() {
  const q = new URLSearchParams({limit: sessionRows});
  if (view.host) q.set('host', view.host);
  const {status, body} = await getJson('/api/sessions?' + q);
  const div = $('sessions');
  div.textContent = '';
  if (status === 503) {
    div.appendChild(document.createTextNode(body.error));  // "journal not enabled"
    div.dataset.state = 'disabled';
    return;
  }
  div.dataset.state = 'enabled';
  div.dataset.sessions = body.length;
  $('sessions-info').textContent = `(the newest ${sessionRows}${view.host ? ' of ' + view.host : ''})`;
  if (!body.length) {
    div.appendChild(document.createTextNode('no collector sessions yet'));
    return;
  }
  // One row per session, newest first: what the journal's diagnosis says the collector did.
  const table = document.createElement('table');
  const cols = ['session', 'host', 'peer', 'transport', 'calls', 'growth', 'loops', 'busy retries', 'handles',
                'values'];
  const head = document.createElement('tr');
  for (const c of cols) cell(head, c).style.fontWeight = 'bold';
  table.appendChild(head);
  for (const d of body.slice().reverse()) {
    const tr = document.createElement('tr');
    tr.className = 'session';
    tr.dataset.session = d.session;
    tr.dataset.growth = d.growth;
    tr.dataset.loops = d.loops.length;
    const growth = d.growth_n ? `${d.growth} (${d.growth_n})` : d.growth;
    const loops = d.loops.map((l) => `${l.value}: ${l.size} x${l.offers}`).join(', ');
    const handles = `${d.handles.closed}/${d.handles.opened} closed`;
    for (const v of [d.session, d.host, d.peer, d.transport, d.calls, growth, loops || '-', d.busy.retries, handles,
                     Object.entries(d.values).map(([k, n]) => `${k} x${n}`).join(', ')])
      cell(tr, String(v)).title = String(v);
    table.appendChild(tr);
  }
  div.appendChild(table);
}

async function pollJournal() {
  const q = new URLSearchParams({host: $('journal-host').value, session: $('journal-session').value,
                                 limit: $('journal-limit').value || '20'});
  const {status, body} = await getJson('/api/journal?' + q);
  const div = $('journal');
  div.textContent = '';
  if (status !== 200) {
    div.appendChild(document.createTextNode(body.error));
    return;
  }
  const entries = Array.isArray(body) ? body : (body.entries || []);
  const table = document.createElement('table');
  const keys = entries.length ? Object.keys(entries[0]) : [];
  const head = document.createElement('tr');
  for (const k of keys) cell(head, k).style.fontWeight = 'bold';
  table.appendChild(head);
  for (const e of entries) {
    const row = document.createElement('tr');
    for (const k of keys) cell(row, typeof e[k] === 'object' ? JSON.stringify(e[k]) : e[k]);
    table.appendChild(row);
  }
  div.appendChild(table);
}

let counters = null;

function fill(select, values, preferred) {
  select.textContent = '';
  for (const v of values) select.add(new Option(v === '' ? '(single instance)' : v, v));
  const i = values.indexOf(preferred);
  select.selectedIndex = i >= 0 ? i : 0;
}

async function loadCounters() {
  const host = view.host;
  const {status, body} = await getJson('/api/hosts/' + encodeURIComponent(host) + '/counters');
  if (status !== 200 || host !== view.host) return;
  counters = body.objects;
  fill($('series-object'), counters.map((o) => o.object), 'Processor');
  objectChanged(false);
  await drawSeries();
}

function objectChanged(draw = true) {
  const o = counters.find((x) => x.object === $('series-object').value);
  fill($('series-instance'), o.instances, '_Total');
  fill($('series-counter'), o.counters, '% Processor Time');
  if (draw) drawSeries();
}

async function drawSeries() {
  const host = view.host;
  const q = new URLSearchParams({object: $('series-object').value, instance: $('series-instance').value,
                                 counter: $('series-counter').value});
  const {status, body} = await getJson('/api/hosts/' + encodeURIComponent(host) + '/series?' + q);
  const info = $('series-info');
  if (host !== view.host) return;
  if (status !== 200) {
    info.textContent = body.error;
    return;
  }
  seriesPoints = body.points.filter((p) => p.value !== undefined);
  info.textContent = `${body.object}(${body.instance})\\${body.counter} [${body.type}]: ` +
                     `${seriesPoints.length} formatted values of ${body.points.length} samples`;
  const canvas = $('series-chart');
  canvas.dataset.points = seriesPoints.length;
  if (seriesChart) {
    seriesChart.data.labels = seriesPoints.map((p) => p.t.toFixed(0) + ' s');
    seriesChart.data.datasets = [
      {label: `\\\\${body.host}\\${body.object}(${body.instance})\\${body.counter}`,
       data: seriesPoints.map((p) => p.value), pointRadius: 2, borderColor: color(0), backgroundColor: color(0)},
      {label: 'timeline position', data: [], pointRadius: 7, pointStyle: 'triangle', showLine: false,
       borderColor: color(1), backgroundColor: color(1)},
      {label: 'events', data: [], pointRadius: 9, pointStyle: 'crossRot', showLine: false,
       borderColor: color(2), backgroundColor: color(2)}];
  }
  if (seriesChart) {
    seriesChart.update();
    canvas.dataset.drawn = seriesChart.getDatasetMeta(0).data.length;
  }
  markPosition();  // once the host's state is known too
}

// The selected host's timeline position on the counter plot: a marker on the last plotted point
// at or before it (the points are evenly spaced samples, not all of them).
function markPosition() {
  if (!selectedHost || !seriesPoints.length) return;
  const pos = selectedHost.timeline.position;
  let at = -1;
  for (let i = 0; i < seriesPoints.length && seriesPoints[i].tick <= pos; ++i) at = i;
  const canvas = $('series-chart');
  canvas.dataset.position = pos;
  canvas.dataset.markerTick = at >= 0 ? seriesPoints[at].tick : -1;
  const marks = eventMarks();
  canvas.dataset.events = marks.size;
  canvas.dataset.eventTicks = [...marks.keys()].map((i) => seriesPoints[i].tick).join(' ');
  if (!seriesChart || seriesChart.data.datasets.length < 3) return;
  seriesChart.data.datasets[1].data = seriesPoints.map((p, i) => (i === at ? p.value : null));
  seriesChart.data.datasets[2].data = seriesPoints.map((p, i) => (marks.has(i) ? p.value : null));
  seriesChart.data.datasets[2].label =
      marks.size ? 'events: ' + [...new Set([...marks.values()].flat())].join(', ') : 'no events on this loop';
  seriesChart.update();
}

// The host's timeline events (GET /api/hosts/NAME `events`: kind, position_s) on the counter plot:
// plotted point index -> the kinds of the events at or after it, before the next one. Only events
// within the plotted loop (position_s up to the last point's time) get a marker.
function eventMarks() {
  const marks = new Map();
  const events = (selectedHost && selectedHost.events) || [];
  const last = seriesPoints.length ? seriesPoints[seriesPoints.length - 1].t : -1;
  for (const e of events) {
    if (e.position_s > last) continue;
    let at = -1;
    for (let i = 0; i < seriesPoints.length && seriesPoints[i].t <= e.position_s; ++i) at = i;
    if (at < 0) continue;
    marks.set(at, [...(marks.get(at) || []), e.kind]);
  }
  return marks;
}

function select(id) {
  view.host = id || '';
  writeView();
  $('detail').hidden = !view.host;
  $('detail-host').textContent = view.host;
  selectedHost = null;
  seriesPoints = [];
  for (const tr of $('hosts').querySelectorAll('tr.host')) tr.classList.toggle('selected', tr.dataset.host === view.host);
  if (view.host) loadCounters();
  tick();
}

let ticking = false;

async function tick() {
  if (ticking) return;  // a slow server: refreshes do not pile up
  ticking = true;
  traffic.requests = 0;
  traffic.bytes = 0;
  try {
    const [fleet, host] = await Promise.all([pollFleet(), pollSelected(), pollSessions(), pollJournal()]);
    const started = performance.now();
    if (fleet) {
      showTotals(fleet);
      showPage(fleet);
      pushRates(fleet.calls_per_s, showSelected(host));
      // The fleet view's first complete render (totals and the first page of hosts in the DOM):
      // one performance mark, at milliseconds since navigation start, what bench/dashboard reads.
      if (!performance.getEntriesByName('fleet-rendered').length) performance.mark('fleet-rendered');
      // Single-host runs open the host's detail at once: there is nothing to choose from.
      if (fleet.hosts === 1 && !view.host && fleet.page.length) select(fleet.page[0].id);
    }
    document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
  } catch (e) {
    document.body.dataset.error = String(e);
  }
  document.body.dataset.refreshRequests = traffic.requests;
  document.body.dataset.refreshBytes = traffic.bytes;
  document.body.dataset.ready = 'yes';
  ticking = false;
}

function viewChanged(key, value) {
  view[key] = value;
  view.offset = 0;
  writeView();
  tick();
}

function start() {
  if (!haveChart) {
    const b = banner('error', 'Chart.js is missing: /chart.js did not load. Install Debian\'s libjs-chart.js ' +
                              '(apt-get install libjs-chart.js); tables still update, charts cannot be drawn.');
    b.id = 'chart-missing';
  } else {
    rateChart = lineChart($('rate-chart'), 'calls/s');
    seriesChart = lineChart($('series-chart'), 'formatted value');
  }
  readView();
  $('q').value = view.q;
  $('state').value = view.state;
  $('order').value = view.order;
  let typing = null;
  $('q').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => viewChanged('q', $('q').value.trim()), 250);
  });
  $('profile').addEventListener('change', () => viewChanged('profile', $('profile').value));
  $('state').addEventListener('change', () => viewChanged('state', $('state').value));
  $('order').addEventListener('change', () => viewChanged('order', $('order').value));
  $('prev').addEventListener('click', () => { view.offset = Math.max(0, view.offset - pageSize); writeView(); tick(); });
  $('next').addEventListener('click', () => { view.offset += pageSize; writeView(); tick(); });
  $('detail-close').addEventListener('click', () => select(''));
  $('series-object').addEventListener('change', () => objectChanged(true));
  $('series-instance').addEventListener('change', drawSeries);
  $('series-counter').addEventListener('change', drawSeries);
  // The fleet as the server put it in the page: drawn before the first request returns.
  const initial = $('initial-fleet');
  if (initial && initial.textContent) {
    try {
      const f = JSON.parse(initial.textContent);
      showTotals(f);
      if (!location.hash.slice(1)) showPage(f);  // its page is the query string's view; a fragment's waits
    } catch (e) {
      document.body.dataset.error = String(e);
    }
  }
  if (view.host) select(view.host);
  else tick();
  setInterval(tick, 1000);
}

start();
