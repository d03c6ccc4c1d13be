// The cluster overview's merges and its peer GET: every registered broker appears once, reachable
// exactly when its admin HTTP answered, with the reason otherwise (property); at most
// MAX_ASKED_BROKERS are asked, live ones first; a partition's figures come from its leader when it
// answered, else from a replica that did, else none; the peer GET reads JSON, and turns an HTTP
// error status and a silent peer into errors within its deadline; over HTTPS it trusts a peer
// whose certificate chains to a root in this broker's own certificate file, and no other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { makeCertificates } from '../../helpers/certificates.js';
import type { ClusterReport, PartitionReport, TopicsReport } from '../../../src/net/admin_reports.js';
import {
  ClusterFanout, MAX_ASKED_BROKERS, brokersToAsk, mergeOverview, mergeTopics, peerGet, type BrokerFigures, type PeerAnswer,
} from '../../../src/net/cluster_overview.js';

function broker(id: number, over: Partial<ClusterReport['brokers'][number]> = {}): ClusterReport['brokers'][number] {
  return { id, host: '127.0.0.1', port: 9000 + id, rack: null, fenced: false, warming: false, adminAddress: `127.0.0.1:${9600 + id}`, live: true, ...over };
}

function figures(nodeId: number): BrokerFigures {
  const none = { le: [], counts: [], count: 0 };
  return { nodeId, status: 'ready', failing: [], loopDelayP99Ms: 1, traffic: { atMs: 1, bytesIn: 0, bytesOut: 0, messagesIn: 0, messagesOut: 0, produceSeconds: none, fetchServeSeconds: none } };
}

test('overview: every registered broker once, in id order, reachable exactly when it answered (property)', () => {
  const arbBroker = fc.record({ live: fc.boolean(), fenced: fc.boolean(), admin: fc.boolean(), answer: fc.constantFrom('ok', 'error', 'missing') });
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 50 }), { maxLength: 8 }), fc.array(arbBroker, { minLength: 8, maxLength: 8 }), (ids, traits) => {
    const brokers = ids.map((id, i) => broker(id, { live: traits[i]!.live, fenced: traits[i]!.fenced, adminAddress: traits[i]!.admin ? `h:${id}` : null }));
    const answers = new Map<number, PeerAnswer<BrokerFigures>>();
    ids.forEach((id, i) => {
      if (!traits[i]!.admin) return;
      if (traits[i]!.answer === 'ok') answers.set(id, { ok: true, value: figures(id) });
      if (traits[i]!.answer === 'error') answers.set(id, { ok: false, error: 'refused' });
    });
    const cluster: ClusterReport = { clusterId: 'c', nodeId: ids[0] ?? 0, controllerId: ids[1] ?? -1, brokers };
    const out = mergeOverview(cluster, null, { underReplicated: 2, offline: 1 }, answers, 5);
    assert.deepEqual(out.brokers.map((b) => b.id), [...ids].sort((a, b) => a - b));
    for (const b of out.brokers) {
      const a = answers.get(b.id);
      assert.equal(b.reachable, a?.ok === true);
      assert.equal(b.error === null, b.reachable);
      assert.equal(b.figures?.nodeId ?? null, b.reachable ? b.id : null);
      assert.equal(b.controller, b.id === cluster.controllerId);
      if (b.adminAddress === null) assert.equal(b.error, 'registered no admin address');
    }
    assert.equal(out.underReplicatedPartitions, 2);
    assert.equal(out.offlinePartitions, 1);
  }));
});

test(`at most ${MAX_ASKED_BROKERS} brokers are asked, live ones first; the rest say why`, () => {
  const brokers = Array.from({ length: MAX_ASKED_BROKERS + 6 }, (_, id) => broker(id, { live: id >= 6 }));
  const { ask, left } = brokersToAsk({ clusterId: 'c', nodeId: 0, controllerId: -1, brokers });
  assert.equal(ask.length, MAX_ASKED_BROKERS);
  assert.ok(ask.every((b) => b.id >= 6));
  assert.deepEqual([...left.keys()].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5]);
  assert.match(left.get(0) ?? '', /not asked/);
});

function partition(p: number, leader: number, replicas: number[], hosted: number | null): PartitionReport {
  const figuresOf = hosted === null ? null : hosted;
  return {
    partition: p, leader, leaderEpoch: 0, replicas, isr: replicas, addingReplicas: [], removingReplicas: [], hosted: hosted !== null,
    sizeBytes: figuresOf, logStartOffset: figuresOf === null ? null : 0, logEndOffset: figuresOf, highWatermark: figuresOf, messagesPerSecond: figuresOf,
  };
}

/** One broker's /v1/topics: the partitions it hosts carry its id as their figures. */
function topicsOf(id: number, layout: { leader: number; replicas: number[] }[]): TopicsReport {
  return {
    totalPartitions: layout.length, truncated: false,
    topics: [{ name: 't', topicId: 'x', internal: false, partitions: layout.map((l, p) => partition(p, l.leader, l.replicas, l.replicas.includes(id) ? id * 100 + p : null)) }],
  };
}

test('topics: figures from the leader when it answered, else a replica that did, else none', () => {
  const layout = [
    { leader: 2, replicas: [1, 2] }, // the leader answered
    { leader: 3, replicas: [3, 2] }, // the leader is down: its follower on 2
    { leader: 3, replicas: [3] }, // hosted only on the silent broker
    { leader: 1, replicas: [1, 2] }, // led by the answering broker itself
  ];
  const answers = new Map<number, PeerAnswer<TopicsReport>>([[2, { ok: true, value: topicsOf(2, layout) }], [3, { ok: false, error: 'no answer within 1000 ms' }]]);
  const out = mergeTopics(topicsOf(1, layout), 1, answers, [3, 1, 2]);
  const parts = out.topics[0]!.partitions;
  assert.deepEqual(parts.map((p) => p.figuresFrom), [2, 2, null, 1]);
  assert.deepEqual(parts.map((p) => p.logEndOffset), [200, 201, null, 103]);
  assert.deepEqual(parts.map((p) => p.hosted), [true, false, false, true], 'hosted still means: on the answering broker');
  assert.deepEqual(out.brokers, [{ id: 1, reachable: true, error: null }, { id: 2, reachable: true, error: null }, { id: 3, reachable: false, error: 'no answer within 1000 ms' }]);
});

test('peer GET: JSON on 200; an error status and a silent peer are errors within the deadline', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/ok') { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ auth: req.headers.authorization ?? null })); return; }
    if (req.url === '/missing') { res.writeHead(404); res.end(); return; }
    // /silent: never answers.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = peerGet(() => []);
  try {
    assert.deepEqual(await get(`${base}/ok`, { authorization: 'Bearer t' }, 2000), { auth: 'Bearer t' });
    await assert.rejects(get(`${base}/missing`, {}, 2000), /HTTP 404/);
    const started = Date.now();
    await assert.rejects(get(`${base}/silent`, {}, 200), /no answer within 200 ms/);
    assert.ok(Date.now() - started < 5000);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('fan-out: peers asked over the admin scheme with the token, this broker answered in-process, a failing peer unreachable', async () => {
  const asked: { url: string; headers: Record<string, string>; timeoutMs: number }[] = [];
  const cluster: ClusterReport = { clusterId: 'c', nodeId: 1, controllerId: 2, brokers: [broker(1), broker(2), broker(3), broker(4, { adminAddress: null })] };
  const fanout = new ClusterFanout({
    reports: { cluster: () => cluster, topics: async () => ({ topics: [], totalPartitions: 0, truncated: false }) },
    view: { localId: 1, revision: 0, controllerId: () => 2, topics: () => [], partition: () => undefined },
    own: async () => figures(1),
    quorum: () => null,
    scheme: 'https',
    authorization: () => 'Bearer s3cret',
    get: async (url, headers, timeoutMs) => {
      asked.push({ url, headers, timeoutMs });
      if (url.includes(':9603')) throw new Error('connect ECONNREFUSED');
      return figures(2);
    },
    timeoutMs: 700,
    now: () => 42,
  });
  const out = await fanout.overview();
  assert.deepEqual(asked.map((a) => a.url).sort(), ['https://127.0.0.1:9602/v1/broker', 'https://127.0.0.1:9603/v1/broker']);
  assert.ok(asked.every((a) => a.headers['authorization'] === 'Bearer s3cret' && a.timeoutMs === 700));
  assert.deepEqual(out.brokers.map((b) => [b.id, b.reachable, b.error]), [[1, true, null], [2, true, null], [3, false, 'connect ECONNREFUSED'], [4, false, 'registered no admin address']]);
  assert.equal(out.atMs, 42);
});

test('peer GET over HTTPS: trusted when its own certificate file carries the root, refused otherwise', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-peer-tls-'));
  try {
    const certs = await makeCertificates(dir);
    // A broker's --admin-ssl-cert-file holding its certificate and the chain up to the root.
    const chain = readFileSync(certs.cert, 'utf8') + readFileSync(certs.ca, 'utf8');
    const server = createHttpsServer({ cert: chain, key: readFileSync(certs.key) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"nodeId":2}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/broker`;
    try {
      assert.deepEqual(await peerGet(() => [chain])(url, {}, 5000), { nodeId: 2 });
      await assert.rejects(peerGet(() => [readFileSync(certs.cert)])(url, {}, 5000), /certificate/i);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
