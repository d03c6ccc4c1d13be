// What operators watch, against a real broker: every metric the Grafana dashboard and the
// Prometheus alert rules under deploy/ name is exposed on /metrics (histograms through their
// _bucket series); docs/metrics.md lists exactly the metric families /metrics exposes, with their
// types and labels; and at info level a produce load writes no log line per message or request.
// One broker (a cluster of 1: every series, replication and raft ones included, is exposed there).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load as loadYaml } from 'js-yaml';
import type { Admin } from 'kafkajs';
import { parsePrometheusText } from '../../src/cli/prometheus_text.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { metricNamesOf } from '../helpers/promql_names.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TOPIC = 'orders';
const GROUP = 'billing';
const MESSAGES = 4000;
/** Log lines a produce load of MESSAGES may add at info: none is expected, a few are tolerated. */
const MAX_LOAD_LOG_LINES = 3;

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; definition?: string }[] };
}
interface RuleFile { groups: { name: string; rules: { alert: string; expr: string }[] }[] }

/** Every (where, expr) of the dashboard's panels and variables and of the alert rules. */
function deployedQueries(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(`${ROOT}deploy/grafana/sluice.json`, 'utf8')) as Dashboard;
  const rules = loadYaml(readFileSync(`${ROOT}deploy/prometheus/alerts.yml`, 'utf8')) as RuleFile;
  const queries: { where: string; expr: string }[] = [];
  for (const p of dashboard.panels) for (const t of p.targets ?? []) queries.push({ where: `panel "${p.title}"`, expr: t.expr });
  // Grafana's label_values(metric, label) is not PromQL: its metric is checked as a selector.
  for (const v of dashboard.templating.list) {
    const m = /^label_values\((\w+)\s*,/.exec(v.definition ?? '');
    if (m !== null) queries.push({ where: `variable ${v.name}`, expr: m[1]! });
  }
  for (const g of rules.groups) for (const r of g.rules) queries.push({ where: `alert ${r.alert}`, expr: r.expr });
  return queries;
}

/** Rows of the metrics table in docs/metrics.md: name, type, label names. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const line of readFileSync(`${ROOT}docs/metrics.md`, 'utf8').split('\n')) {
    const m = /^\|\s*`(sluice_\w+)`\s*\|\s*(\w+)\s*\|([^|]*)\|/.exec(line);
    if (m === null) continue;
    assert.ok(!rows.has(m[1]!), `${m[1]} is listed twice`);
    const labels = [...m[3]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!).sort();
    rows.set(m[1]!, { type: m[2]!, labels });
  }
  return rows;
}

let broker: BrokerProcess;
let admin: Admin;
let metricsText = '';

before(async () => {
  broker = await BrokerProcess.start({ logLevel: 'info', shards: 2 });
  const kafka = kafkajsClient(broker.bootstrap, 'observability-e2e');
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }], waitForLeaders: true });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await admin?.disconnect();
  await broker?.dispose();
});

describe('observability', () => {
  it('at info, a produce load writes no log line per message or request', async () => {
    const kafka = kafkajsClient(broker.bootstrap, 'observability-load');
    const producer = await connectedProducer(kafka);
    try {
      // Connected and the topic's metadata known before counting, so only the load itself is measured.
      await sendRange(producer, TOPIC, 'warm', 0, 10);
      await sleep(200);
      const before = readFileSync(broker.logPath, 'utf8').split('\n').length;
      await sendRange(producer, TOPIC, 'load', 0, MESSAGES, { batch: 20, acks: -1 });
      await sleep(200);
      const added = readFileSync(broker.logPath, 'utf8').split('\n').slice(before - 1).filter((l) => l.trim() !== '');
      assert.ok(added.length <= MAX_LOAD_LOG_LINES, `${added.length} log lines for ${MESSAGES} messages in ${MESSAGES / 20} requests:\n${added.slice(0, 10).join('\n')}`);
    } finally {
      await producer.disconnect();
    }
  });

  it('every metric the dashboard and the alert rules name is exposed on /metrics', async () => {
    // Committed offsets behind the log end make the group lag series appear.
    await admin.setOffsets({ groupId: GROUP, topic: TOPIC, partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '5' }] });
    const deadline = Date.now() + 15_000;
    for (;;) {
      metricsText = await (await fetch(`http://${broker.host}:${broker.adminPort}/metrics`)).text();
      if (metricsText.includes('sluice_group_lag_seconds{') || Date.now() > deadline) break;
      await sleep(200);
    }
    // A name is exposed when samples carry it, or when /metrics declares its family (# TYPE) and the
    // family has no series yet because it is labelled by events that have not happened (e.g.
    // connections refused, by reason); a histogram's family exposes _bucket, _sum and _count.
    const exposed = new Set(parsePrometheusText(metricsText).map((s) => s.name));
    for (const m of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exposed.add(m[1]!);
      if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(m[1]! + suffix);
    }
    const queries = deployedQueries();
    assert.ok(queries.length >= 40, `only ${queries.length} queries found`);
    const missing: string[] = [];
    for (const { where, expr } of queries) {
      const names = metricNamesOf(expr);
      assert.ok(names.length > 0, `${where} names no metric: ${expr}`);
      for (const name of names) if (!exposed.has(name)) missing.push(`${where}: ${name}`);
    }
    assert.deepEqual(missing, [], 'named by deploy/ but not exposed');
  });

  it('docs/metrics.md lists exactly the metric families /metrics exposes, with their types and labels', () => {
    assert.ok(metricsText !== '', 'scraped by the previous test');
    const families = new Map<string, string>();
    for (const line of metricsText.split('\n')) {
      const m = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (m !== null) families.set(m[1]!, m[2]!);
    }
    const documented = documentedMetrics();
    assert.deepEqual([...documented.keys()].sort(), [...families.keys()].sort(), 'documented names differ from exposed families');
    for (const [name, type] of families) assert.equal(documented.get(name)?.type, type, `type of ${name}`);
    // Labels as the samples carry them (a family without samples yet cannot tell).
    const seen = new Map<string, Set<string>>();
    for (const s of parsePrometheusText(metricsText)) {
      const family = families.has(s.name) ? s.name : s.name.replace(/_(bucket|sum|count)$/, '');
      let labels = seen.get(family);
      if (labels === undefined) seen.set(family, (labels = new Set()));
      for (const l of Object.keys(s.labels)) if (l !== 'le') labels.add(l);
    }
    for (const [family, labels] of seen) assert.deepEqual(documented.get(family)?.labels, [...labels].sort(), `labels of ${family}`);
  });
});
