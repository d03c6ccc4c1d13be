// The web console of ONE broker of a 3-broker cluster shows the whole cluster, in headless
// Chromium: every broker with its address, standing, reachability and own figures (loop delay,
// throughput), the quorum, and on the topics page the end offsets of partitions led by the other
// brokers, which kafkajs produced to (figures only those brokers know). Then a broker is killed
// (kill -9): the page marks it unreachable and, once its session ran out, fenced and its partitions
// offline, while the other two still show their figures. One cluster for all the steps; screenshots
// under test-output/console/cluster-*.png. Skips without Chromium (SLUICE_REQUIRE_BROWSER=1 fails).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { Producer } from 'kafkajs';
import { KafkaAdmin } from '../../src/client/admin.js';
import type { ClusterTopicsReport } from '../../src/net/cluster_overview.js';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { SCREENSHOTS, browserSkip, launchChromium } from '../helpers/chromium.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { threeBrokers } from '../helpers/three_brokers.js';

const TOPIC = 'console-spread';
const PARTITIONS = 6;
/** Partition p holds 10 + p records, so each end offset names its partition. */
const recordsIn = (p: number): number => 10 + p;

let browser: Browser;
let page: Page;
let producer: Producer;
/** Leader of each partition, by partition. */
let leaders: number[] = [];

const base = (b: BrokerProcess): string => `http://${b.host}:${b.adminPort}`;

async function open(name: string): Promise<void> {
  await page.goto(`${base(brokers[0]!)}/#${name}`);
  await page.locator(`section#page-${name}`).waitFor({ state: 'visible' });
  await page.waitForFunction('Number(document.body.dataset.refreshed ?? 0) > 0');
}

/** The text of broker `id`'s row on the overview, cells tab-separated. */
function brokerRow(id: number): Promise<string[]> {
  return page.getByTestId('brokers').locator('tbody tr').filter({ has: page.locator('td:first-child', { hasText: new RegExp(`^${id}$`) }) }).locator('td').allInnerTexts();
}

/** Waits until the overview's row of broker `id` satisfies `ok` (the page polls every 2 s). */
async function waitForRow(id: number, what: string, ok: (cells: string[]) => boolean, timeoutMs = 30_000): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const cells = await brokerRow(id);
    if (ok(cells)) return cells;
    if (Date.now() > until) assert.fail(`broker ${id}'s row never showed ${what}: ${cells.join(' | ')}`);
    await page.waitForTimeout(250);
  }
}

/** Creates the topic, produces to every partition with kafkajs and notes the leaders. */
async function populate(started: readonly BrokerProcess[]): Promise<void> {
  const first = started[0]!;
  const admin = await KafkaAdmin.connect({ host: first.host, port: first.kafkaPort, clientId: 'console-cluster-test' });
  try {
    // Replication factor 1: each partition's figures live on exactly one broker.
    await admin.createTopics(TOPIC, PARTITIONS, 1, {});
  } finally {
    await admin.close();
  }
  producer = await connectedProducer(kafkajsClient(first.bootstrap));
  for (let p = 0; p < PARTITIONS; p++) {
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: recordsIn(p) }, (_, i) => ({ value: `v${i}`, partition: p })) });
  }
  const report = await (await fetch(`${base(first)}/v1/cluster/topics`)).json() as ClusterTopicsReport;
  leaders = report.topics.find((t) => t.name === TOPIC)!.partitions.map((p) => p.leader);
}

// One cluster for every step (the hooks of threeBrokers run before this file's).
const brokers: BrokerProcess[] = browserSkip === false ? threeBrokers({ sessionMs: 2000, heartbeatMs: 400, started: populate }) : [];

before(async () => {
  if (browserSkip !== false) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
  // Without the console's CSP, which forbids the string predicates waitForFunction evaluates.
  page = await browser.newPage({ viewport: { width: 1500, height: 900 }, bypassCSP: true });
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await producer?.disconnect().catch(() => undefined);
});

describe('web console of one broker shows the whole cluster', { skip: browserSkip }, () => {
  it('overview: all three brokers reachable with their own figures, the quorum and partition health', async () => {
    await open('overview');
    assert.equal(await page.getByTestId('brokers').locator('tbody tr').count(), 3);
    for (const [i, b] of brokers.entries()) {
      // The second reading of each broker's traffic gives its rates.
      const cells = await waitForRow(i + 1, 'rates', (c) => c[8] !== '–');
      assert.equal(cells[1], `${b.host}:${b.kafkaPort}`);
      assert.equal(cells[3], 'live');
      assert.equal(cells[5], `${b.host}:${b.adminPort}`);
      assert.equal(cells[6], 'yes');
      assert.equal(cells[7], 'ready');
      assert.match(cells[8] ?? '', /\/s$/);
      assert.match(cells[12] ?? '', /^\d+\.\d ms$/, `broker ${i + 1}'s loop delay`);
    }
    const controllers = await page.getByTestId('brokers').locator('tbody tr').allInnerTexts();
    assert.equal(controllers.filter((r) => r.split('\t')[4] === 'active').length, 1);
    assert.match(await page.getByTestId('quorum').innerText(), /^leader [123] · epoch \d+ · voters 1,2,3$/);
    assert.equal(await page.getByTestId('offline').innerText(), '0');
    await page.screenshot({ path: `${SCREENSHOTS}cluster-overview.png`, fullPage: true });
  });

  it('topics: end offsets of partitions led by the other brokers, taken from those brokers', async () => {
    assert.ok(leaders.some((l) => l !== 1), `some partition is led elsewhere than broker 1: ${leaders.join(',')}`);
    await open('topics');
    const rows = page.locator(`[data-topic="${TOPIC}"] tbody tr`);
    assert.equal(await rows.count(), PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) {
      const cells = await rows.nth(p).locator('td').allInnerTexts();
      assert.equal(cells[1], String(leaders[p]));
      assert.equal(cells[7], String(recordsIn(p)), `partition ${p}'s end offset`);
      assert.equal(cells[10], String(leaders[p]), `partition ${p}'s figures come from its leader`);
    }
    await page.screenshot({ path: `${SCREENSHOTS}cluster-topics.png`, fullPage: true });
  });

  it('a killed broker shows unreachable, then fenced with its partitions offline; the others still render', async () => {
    const controller = Number((await (await fetch(`${base(brokers[0]!)}/v1/cluster`)).json() as { controllerId: number }).controllerId);
    // Not the broker whose console is open, and not the controller, so no election is waited for.
    const victim = [2, 3].find((id) => id !== controller) ?? 3;
    await brokers[victim - 1]!.kill9();
    await open('overview');
    await waitForRow(victim, 'unreachable', (c) => /^no: /.test(c[6] ?? ''));
    const fenced = await waitForRow(victim, 'fenced', (c) => c[3] === 'fenced');
    assert.equal(fenced[8], '–', 'no figures for a broker that does not answer');
    for (const id of [1, 2, 3].filter((x) => x !== victim)) {
      const cells = await waitForRow(id, 'its figures', (c) => c[6] === 'yes' && c[8] !== '–');
      assert.equal(cells[3], 'live');
    }
    const led = leaders.filter((l) => l === victim).length;
    await page.waitForFunction(`document.querySelector('[data-testid="offline"]')?.textContent === '${led}'`, undefined, { timeout: 30_000 });
    await page.screenshot({ path: `${SCREENSHOTS}cluster-broker-down.png`, fullPage: true });

    await open('topics');
    assert.match(await page.getByTestId('silent-broker').innerText(), new RegExp(`^Broker ${victim} did not answer`));
    const rows = page.locator(`[data-topic="${TOPIC}"] tbody tr`);
    for (let p = 0; p < PARTITIONS; p++) {
      if (leaders[p] === victim) continue;
      assert.equal((await rows.nth(p).locator('td').allInnerTexts())[7], String(recordsIn(p)), `partition ${p} on a live broker keeps its figures`);
    }
  });
});
