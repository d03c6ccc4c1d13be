// The web console in a real browser: headless Chromium (Debian's `chromium`, driven by
// playwright-core) against a broker process with topics, a lagging group (committed by our admin
// client, its id full of markup characters) and a live kafkajs member whose client id is markup
// too. Loads every page and asserts on what it shows (brokers, partition rows, end offsets, group
// lag in records and seconds, actor rows), watches an end offset move after more records are
// produced, checks that no broker string became markup or script, and saves a screenshot of each
// page under test-output/console/. A second broker started with --admin-token-file: the page
// asks for the token once (a dialog), keeps it for the tab and shows the broker's data; a wrong
// token is asked again; a reload does not ask. Without Chromium the tests skip, saying why, unless
// SLUICE_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Consumer, Producer } from 'kafkajs';
import type { Browser, Page } from 'playwright-core';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { SCREENSHOTS, browserSkip, launchChromium } from '../helpers/chromium.js';

const skip = browserSkip;

const ORDERS = 'console-orders';
const PAYMENTS = 'console-payments';
/** Group ids may hold any characters: this one is markup, quotes and an ampersand. */
const LAGGING_GROUP = `lag<script>window.__pwned=1</script>&"'`;
const LIVE_GROUP = 'console-live';
const LIVE_CLIENT_ID = '<img src=x onerror="window.__pwned=2">';

let broker: BrokerProcess;
let admin: KafkaAdmin;
let producer: Producer;
let consumer: Consumer | undefined;
let browser: Browser;
let page: Page;
let base: string;
let nodeId: number;

async function produce(topic: string, partition: number, n: number): Promise<void> {
  await producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ value: `v${i}`, partition })) });
}

/** One admin read of the shards' partitions: a sample of the broker's log-end history. */
async function sampleHistory(): Promise<void> {
  const res = await fetch(`${base}/v1/topics`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
}

async function open(name: string): Promise<void> {
  await page.goto(`${base}/#${name}`);
  await page.locator(`section#page-${name}`).waitFor({ state: 'visible' });
  await page.waitForFunction('Number(document.body.dataset.refreshed ?? 0) > 0');
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}

before(async () => {
  if (skip !== false) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  broker = await BrokerProcess.start({ args: ['--group-initial-rebalance-delay-ms', '0'] });
  base = `http://${broker.host}:${broker.adminPort}`;
  nodeId = ((await (await fetch(`${base}/v1/cluster`)).json()) as { nodeId: number }).nodeId;
  admin = await KafkaAdmin.connect({ host: broker.host, port: broker.kafkaPort, clientId: 'console-test' });
  await admin.createTopics(ORDERS, 3, 1, {});
  await admin.createTopics(PAYMENTS, 1, 1, {});
  producer = await connectedProducer(kafkajsClient(broker.bootstrap));
  // Orders-0 grows in steps the history sees (one sample each, a second apart), so the lag in
  // seconds of a group committed at 20 is the time between the steps that passed 20 and the last.
  await produce(ORDERS, 0, 20);
  await sampleHistory();
  await sleep(1100);
  await produce(ORDERS, 0, 30);
  await sampleHistory();
  await sleep(1100);
  await produce(ORDERS, 0, 10);
  await sampleHistory();
  await produce(ORDERS, 1, 7);
  await produce(PAYMENTS, 0, 5);
  await admin.commitGroupOffsets(LAGGING_GROUP, [{ topic: ORDERS, partition: 0, offset: 20 }, { topic: ORDERS, partition: 1, offset: 7 }]);

  consumer = kafkajsClient(broker.bootstrap, LIVE_CLIENT_ID).consumer({ groupId: LIVE_GROUP, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: PAYMENTS, fromBeginning: true });
  await consumer.run({ eachMessage: async () => undefined });

  browser = await launchChromium();
  // Without the console's CSP, so the markup test shows the escaping itself (the CSP is a second
  // guard, checked from the headers).
  page = await browser.newPage({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  page.on('dialog', (d) => { throw new Error(`a dialog opened: ${d.message()}`); });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await browser?.close().catch(() => undefined);
  await consumer?.disconnect().catch(() => undefined);
  await producer?.disconnect().catch(() => undefined);
  await admin?.close().catch(() => undefined);
  await broker?.dispose();
});

describe('web console in Chromium', { skip }, () => {
  it('overview: cluster, controller, health and brokers, from /v1/cluster/overview', async () => {
    const cluster = await (await fetch(`${base}/v1/cluster`)).json() as { clusterId: string; nodeId: number; controllerId: number };
    await open('overview');
    assert.equal(await page.getByTestId('cluster-id').textContent(), cluster.clusterId);
    assert.equal(await page.getByTestId('node-id').textContent(), String(cluster.nodeId));
    assert.equal(await page.getByTestId('controller').textContent(), String(cluster.controllerId));
    assert.match(await page.getByTestId('health').innerText(), /^ready/);
    const row = page.getByTestId('brokers').locator('tbody tr');
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), new RegExp(`^${cluster.nodeId}\\s+${broker.host}:${broker.kafkaPort}\\s+–\\s+live\\s+active`));
    // Rates appear from the second poll on.
    await page.waitForFunction(`document.querySelector('[data-testid="rate-in"]')?.textContent !== '–'`, undefined, { timeout: 10_000 });
    // Two rate points (three polls) before the charts draw a line, so the screenshot shows one.
    await page.waitForFunction('Number(document.body.dataset.refreshed ?? 0) >= 3', undefined, { timeout: 10_000 });
    assert.equal(await page.locator('#chart-bytes canvas').count(), 1, 'uPlot drew the throughput chart');
    await screenshot('overview');
  });

  it('topics: one row per partition with leader, replicas, ISR and end offset, updated live', async () => {
    await open('topics');
    const orders = page.locator(`[data-topic="${ORDERS}"]`);
    const rows = orders.locator('tbody tr');
    assert.equal(await rows.count(), 3);
    const cells = await rows.nth(0).locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(0, 5), ['0', String(nodeId), '0', `[${nodeId}]`, `[${nodeId}]`]);
    assert.equal(cells[7], '60');
    assert.equal(await rows.nth(1).locator('td.end-offset').innerText(), '7');
    assert.equal(await page.locator(`[data-topic="${PAYMENTS}"] tbody tr`).count(), 1);
    await screenshot('topics');
    await produce(ORDERS, 0, 5);
    const endCell = JSON.stringify(`[data-topic="${ORDERS}"] tbody tr td.end-offset`);
    await page.waitForFunction(`document.querySelector(${endCell})?.textContent === '65'`, undefined, { timeout: 10_000 });
  });

  it('groups: members and assignment, lag in records and seconds, markup shown as text', async () => {
    await open('groups');
    await page.getByTestId('members').getByText(LIVE_CLIENT_ID, { exact: true }).first().waitFor({ timeout: 20_000 });
    const lagging = page.locator('[data-group]').filter({ has: page.getByTestId('group-id').getByText(LAGGING_GROUP, { exact: true }) });
    assert.equal(await lagging.count(), 1, 'the group id is shown verbatim');
    const rows = lagging.getByTestId('group-partitions').locator('tbody tr');
    assert.equal(await rows.count(), 2);
    const first = await rows.nth(0).locator('td').allInnerTexts();
    assert.deepEqual(first.slice(0, 5), [ORDERS, '0', '20', '65', '45']);
    const seconds = /^(\d+\.\d) s$/.exec(first[5] ?? '');
    assert.ok(seconds !== null, `lag in seconds "${first[5]}" is exact, not a lower bound`);
    assert.ok(Number(seconds[1]) >= 1, `lag in seconds ${seconds[1]} spans the second between the produce steps`);
    assert.deepEqual((await rows.nth(1).locator('td').allInnerTexts()).slice(0, 6), [ORDERS, '1', '7', '7', '0', '0.0 s']);
    assert.equal(await lagging.getByTestId('group-lag').innerText(), '45');

    const live = page.locator(`[data-group="${LIVE_GROUP}"]`);
    const member = await live.getByTestId('members').locator('tbody tr td').allInnerTexts();
    assert.equal(member[1], LIVE_CLIENT_ID);
    assert.equal(member[3], `${PAYMENTS}[0]`);
    // Nothing the broker sent became an element or ran.
    assert.equal(await page.locator('main script, main img').count(), 0);
    assert.equal(await page.evaluate('window.__pwned'), undefined);
    const headers = (await fetch(`${base}/`)).headers;
    assert.match(headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(headers.get('x-content-type-options'), 'nosniff');
    await screenshot('groups');
  });

  it('actors: every shard with ring depth and loop delay, one row per hosted partition', async () => {
    await open('actors');
    const shards = page.getByTestId('shards').locator('tbody tr');
    assert.equal(await shards.count(), 2);
    assert.match(await shards.nth(0).innerText(), /^0\s+\d+\s+\d+\s+.+\s+\d+(\.\d)? \w+ \/ \d+(\.\d)? \w+\s+.+\s+\d+\.\d ms\s+\d+\.\d ms/);
    const actorRows = await page.getByTestId('actors').locator('tbody tr').allInnerTexts();
    const orders = actorRows.filter((r) => r.startsWith(`${ORDERS}\t`));
    assert.equal(orders.length, 3, actorRows.join('\n'));
    assert.ok(orders.some((r) => /^\S+\t0\tleader\t\d+\t0\t65\t65\t/.test(r)), orders.join('\n'));
    await screenshot('actors');
  });

  it('reassignments: says none is in progress', async () => {
    await open('reassignments');
    assert.equal(await page.getByTestId('no-reassignments').innerText(), '(no reassignments in progress)');
    assert.equal(await page.locator('#reassign-badge').isHidden(), true);
    await screenshot('reassignments');
  });
});

describe('web console against a broker with an admin token', { skip }, () => {
  const TOKEN = 'console-token-42';
  let work: string;
  let secured: BrokerProcess;
  let securedBase: string;

  before(async () => {
    if (skip !== false) return;
    work = mkdtempSync(join(tmpdir(), 'sluice-console-token-'));
    const tokenFile = join(work, 'admin-token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    secured = await BrokerProcess.start({ shards: 1, args: ['--admin-token-file', tokenFile] });
    securedBase = `http://${secured.host}:${secured.adminPort}`;
  });
  afterEach((t) => secured?.noteResult(t));
  after(async () => {
    await secured?.dispose();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('asks for the token once per tab, refuses a wrong one, and then shows the broker', async () => {
    assert.equal((await fetch(`${securedBase}/v1/cluster`)).status, 401);
    const cluster = await (await fetch(`${securedBase}/v1/cluster`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as { nodeId: number };
    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const answers = ['wrong-token', TOKEN];
    const asked: string[] = [];
    tab.on('dialog', (d) => {
      asked.push(d.message());
      void d.accept(answers.shift() ?? '');
    });
    try {
      await tab.goto(`${securedBase}/#overview`);
      await tab.locator('body[data-refreshed]').waitFor({ state: 'attached', timeout: 30_000 });
      assert.equal(asked.length, 2, asked.join(' | '));
      assert.match(asked[0]!, /asks for its admin token/);
      assert.match(asked[1]!, /refused/);
      assert.equal(await tab.getByTestId('node-id').textContent(), String(cluster.nodeId));
      assert.match(await tab.getByTestId('health').innerText(), /^ready/);
      assert.equal(await tab.evaluate('sessionStorage.getItem("sluice-admin-token")'), TOKEN);
      await tab.reload();
      await tab.locator('body[data-refreshed]').waitFor({ state: 'attached', timeout: 30_000 });
      assert.equal(asked.length, 2, 'the tab keeps the token across a reload');
      await tab.screenshot({ path: `${SCREENSHOTS}token.png`, fullPage: true });
    } finally {
      await tab.close();
    }
  });
});
