// The console's driver (browser, ES module): shows the page named by the URL's hash and polls
// the admin JSON endpoints it needs every POLL_MS, keeping a short client-side history of the
// traffic totals for the charts (rates and p99s are differences between two readings). The
// overview and topics pages read the whole cluster through this broker (/v1/cluster/overview,
// /v1/cluster/topics), which asks every other broker; each broker's rates are diffed here too. A broker
// started with --admin-token-file answers 401: the page then asks for the token once, keeps it in
// sessionStorage (gone with the tab) and sends it as a bearer token on every request.
import uPlot from './vendor/uPlot.esm.js';
import {
  actorsPage, brokersTable, clusterSummary, groupsPage, overviewSummary, reassignmentsPage, topicsPage, trafficRates,
} from './views.js';

const POLL_MS = 2000;
/** Points the charts keep (four minutes at the poll interval). */
const CHART_POINTS = 120;
const PAGES = ['overview', 'topics', 'groups', 'actors', 'reassignments'];

const chartHistory = { t: [], bytesIn: [], bytesOut: [], produceP99: [], fetchP99: [] };
let previousTraffic = null;
/** Each broker's last traffic reading from /v1/cluster/overview, to diff the next one against. */
let previousBrokerTraffic = new Map();
let previousShards = new Map();
let charts = null;

const TOKEN_KEY = 'sluice-admin-token';
/** Set when the user dismissed the question: polls do not ask again until the page is reloaded. */
let tokenDeclined = false;

function request(path, token) {
  return fetch(path, { cache: 'no-store', headers: token ? { authorization: `Bearer ${token}` } : {} });
}

async function getJson(path) {
  const sent = sessionStorage.getItem(TOKEN_KEY);
  let res = await request(path, sent);
  if (res.status === 401) {
    // Another request may have asked already; ask only when the token sent is still the stored one.
    if (sessionStorage.getItem(TOKEN_KEY) === sent) {
      const answer = tokenDeclined ? null : window.prompt(sent ? 'That admin token was refused; the admin token:' : 'This broker asks for its admin token:');
      if (!answer) {
        tokenDeclined = true;
        throw new Error('the admin token is needed (reload the page to enter it)');
      }
      sessionStorage.setItem(TOKEN_KEY, answer.trim());
    }
    res = await request(path, sessionStorage.getItem(TOKEN_KEY));
  }
  // /v1/health answers 503 with a JSON body while not ready: still a report.
  if (!res.ok && res.status !== 503) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

function currentPage() {
  const name = location.hash.replace(/^#/, '');
  return PAGES.includes(name) ? name : 'overview';
}

function showPage(name) {
  for (const s of document.querySelectorAll('main > section')) s.hidden = s.dataset.page !== name;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === name);
}

function makeChart(el, series) {
  const opts = {
    width: 520, height: 200,
    scales: { x: { time: true } },
    series: [{}, ...series.map(([label, stroke]) => ({ label, stroke, width: 2 }))],
    axes: [{}, { size: 70 }],
  };
  return new uPlot(opts, [[], ...series.map(() => [])], el);
}

function ensureCharts() {
  charts ??= {
    bytes: makeChart(document.getElementById('chart-bytes'), [['in', '#2563eb'], ['out', '#16a34a']]),
    p99: makeChart(document.getElementById('chart-p99'), [['produce', '#9333ea'], ['fetch', '#ea580c']]),
  };
}

function push(key, value) {
  const list = chartHistory[key];
  list.push(value);
  if (list.length > CHART_POINTS) list.shift();
}

/** Each broker's rates since its previous reading (null on its first); forgets brokers gone from the listing. */
function brokerRates(overview) {
  const rates = new Map();
  const readings = new Map();
  for (const b of overview.brokers) {
    if (b.figures === null) { rates.set(b.id, null); continue; }
    rates.set(b.id, trafficRates(previousBrokerTraffic.get(b.id), b.figures.traffic));
    readings.set(b.id, b.figures.traffic);
  }
  previousBrokerTraffic = readings;
  return rates;
}

function replace(id, nodes) {
  document.getElementById(id).replaceChildren(...nodes);
}

async function refreshOverview(rates) {
  const [overview, health] = await Promise.all([getJson('/v1/cluster/overview'), getJson('/v1/health')]);
  const perBroker = brokerRates(overview);
  replace('overview-summary', [...overviewSummary(overview, health, rates), ...clusterSummary(overview, perBroker)]);
  replace('overview-brokers', [brokersTable(overview, perBroker)]);
  ensureCharts();
  const t = chartHistory.t;
  // One point gives uPlot no time span to scale to: the axes would read in years.
  if (t.length < 2) return;
  charts.bytes.setData([t, chartHistory.bytesIn, chartHistory.bytesOut]);
  charts.p99.setData([t, chartHistory.produceP99, chartHistory.fetchP99]);
}

async function refreshActors() {
  const shards = await getJson('/v1/actors');
  const busy = new Map();
  const now = performance.now();
  for (const s of shards) {
    const prev = previousShards.get(s.shard);
    if (prev !== undefined && now > prev.at) busy.set(s.shard, Math.min(1, (s.busyMs - prev.busyMs) / (now - prev.at)));
  }
  previousShards = new Map(shards.map((s) => [s.shard, { busyMs: s.busyMs, at: now }]));
  replace('page-actors', actorsPage(shards, busy));
}

async function refresh() {
  const page = currentPage();
  showPage(page);
  const status = document.getElementById('status');
  try {
    const [traffic, reassignments] = await Promise.all([getJson('/v1/traffic'), getJson('/v1/reassignments')]);
    const rates = trafficRates(previousTraffic, traffic);
    previousTraffic = traffic;
    if (rates !== null) {
      push('t', traffic.atMs / 1000);
      push('bytesIn', rates.bytesIn);
      push('bytesOut', rates.bytesOut);
      push('produceP99', rates.produceP99Ms);
      push('fetchP99', rates.fetchP99Ms);
    }
    const badge = document.getElementById('reassign-badge');
    badge.hidden = reassignments.length === 0;
    badge.textContent = String(reassignments.length);
    if (page === 'overview') await refreshOverview(rates);
    else if (page === 'topics') replace('page-topics', topicsPage(await getJson('/v1/cluster/topics')));
    else if (page === 'groups') replace('page-groups', groupsPage(await getJson('/v1/groups')));
    else if (page === 'actors') await refreshActors();
    else replace('page-reassignments', reassignmentsPage(reassignments));
    status.className = '';
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed ?? 0) + 1);
  } catch (err) {
    status.className = 'error';
    status.textContent = `broker unreachable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

let timer = null;
function schedule() {
  clearTimeout(timer);
  timer = setTimeout(async () => { await refresh(); schedule(); }, POLL_MS);
}

window.addEventListener('hashchange', async () => { await refresh(); schedule(); });
await refresh();
schedule();
