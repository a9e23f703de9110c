// perfsim's admin dashboard: polls the admin API (admin/README.md) and draws with Chart.js
// (Debian's libjs-chart.js, served at /chart.js). Plain browser JavaScript, no build step.
'use strict';

const $ = (id) => document.getElementById(id);
const haveChart = typeof Chart !== 'undefined';
const rateHistory = 60;  // points of the live calls/s chart
let rateChart = null, seriesChart = null;
let lastCalls = {}, lastTime = 0;
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

async function getJson(url) {
  const r = await fetch(url, {cache: 'no-store'});
  const body = await r.json().catch(() => ({error: 'not JSON'}));
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

async function pollHosts() {
  const {status, body} = await getJson('/api/hosts');
  if (status !== 200) return;
  const now = Date.now() / 1000;
  const tbody = $('hosts').querySelector('tbody');
  tbody.textContent = '';
  const rates = {};
  for (const h of body) {
    const row = document.createElement('tr');
    row.className = 'host';
    row.dataset.host = h.id;
    cell(row, h.id);
    cell(row, h.addresses.join(' '));
    cell(row, h.profile || '-');
    cell(row, timelineText(h.timeline));
    cell(row, h.quirks.join(' '));
    cell(row, h.calls);
    const rate = lastTime && lastCalls[h.id] !== undefined ? (h.calls - lastCalls[h.id]) / (now - lastTime) : 0;
    rates[h.id] = rate;
    cell(row, rate.toFixed(1));
    tbody.appendChild(row);
    lastCalls[h.id] = h.calls;
  }
  lastTime = now;
  if (rateChart) {
    const labels = rateChart.data.labels;
    labels.push(new Date().toLocaleTimeString());
    for (const [id, rate] of Object.entries(rates)) {
      let ds = rateChart.data.datasets.find((d) => d.label === id);
      if (!ds) {
        const c = color(rateChart.data.datasets.length);
        ds = {label: id, data: new Array(labels.length - 1).fill(0), pointRadius: 0, borderColor: c, backgroundColor: c};
        rateChart.data.datasets.push(ds);
      }
      ds.data.push(rate);
    }
    if (labels.length > rateHistory) {
      labels.shift();
      for (const ds of rateChart.data.datasets) ds.data.shift();
    }
    rateChart.update();
  }
  const select = $('series-host');
  if (select.options.length === 0) {
    for (const h of body) select.add(new Option(h.id, h.id));
    await loadCounters();
  }
  document.body.dataset.hosts = body.length;
}

async function pollSessions() {
  const {status, body} = await getJson('/api/sessions');
  const div = $('sessions');
  div.textContent = '';
  if (status === 503) {
    div.appendChild(document.createTextNode(body.error));  // "journal not enabled"
    div.dataset.state = 'disabled';
    return;
  }
  div.dataset.state = 'enabled';
  div.dataset.sessions = body.length;
  if (!body.length) {
    div.appendChild(document.createTextNode('no collector sessions yet'));
    return;
  }
  // One row per session: what the journal's diagnosis says the collector did.
  const table = document.createElement('table');
  const cols = ['session', 'host', 'peer', 'transport', 'calls', 'growth', 'loops', 'busy retries', 'handles',
                'values'];
  const head = document.createElement('tr');
  for (const c of cols) cell(head, c).style.fontWeight = 'bold';
  table.appendChild(head);
  for (const d of body) {
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
      cell(tr, String(v));
    table.appendChild(tr);
  }
  div.appendChild(table);
}

async function pollJournal() {
  const q = new URLSearchParams({host: $('journal-host').value, session: $('journal-session').value,
                                 limit: $('journal-limit').value || '100'});
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
  const host = $('series-host').value;
  const {status, body} = await getJson('/api/hosts/' + encodeURIComponent(host) + '/counters');
  if (status !== 200) return;
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
  const host = $('series-host').value;
  const q = new URLSearchParams({object: $('series-object').value, instance: $('series-instance').value,
                                 counter: $('series-counter').value});
  const {status, body} = await getJson('/api/hosts/' + encodeURIComponent(host) + '/series?' + q);
  const info = $('series-info');
  if (status !== 200) {
    info.textContent = body.error;
    return;
  }
  const pts = body.points.filter((p) => p.value !== undefined);
  info.textContent = `${body.object}(${body.instance})\\${body.counter} [${body.type}]: ` +
                     `${pts.length} formatted values of ${body.points.length} samples`;
  const canvas = $('series-chart');
  canvas.dataset.points = pts.length;
  if (!seriesChart) return;
  seriesChart.data.labels = pts.map((p) => p.t.toFixed(0) + ' s');
  seriesChart.data.datasets = [{label: `\\\\${body.host}\\${body.object}(${body.instance})\\${body.counter}`,
                                data: pts.map((p) => p.value), pointRadius: 2, borderColor: color(0),
                                backgroundColor: color(0)}];
  seriesChart.update();
  canvas.dataset.drawn = seriesChart.getDatasetMeta(0).data.length;
}

async function tick() {
  await Promise.all([pollHosts(), pollSessions(), pollJournal()]).catch((e) => {
    document.body.dataset.error = String(e);
  });
  document.body.dataset.ready = 'yes';
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
  $('series-host').addEventListener('change', loadCounters);
  $('series-object').addEventListener('change', () => objectChanged(true));
  $('series-instance').addEventListener('change', drawSeries);
  $('series-counter').addEventListener('change', drawSeries);
  tick();
  setInterval(tick, 1000);
}

start();
