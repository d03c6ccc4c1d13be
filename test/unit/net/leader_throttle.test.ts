// The leader side of KIP-73 replication throttling: only listed replicas outside the ISR count;
// the quota follows the image's per-broker rate, then the cluster default, and is unthrottled
// by default; the fetch handler gives such partitions no byte budget while it is exceeded and
// records what they were sent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchItem } from '../../../src/actors/partition_router.js';
import { LeaderThrottle } from '../../../src/net/leader_throttle.js';
import { fetchHandler, type FetchDeps } from '../../../src/net/handlers/fetch.js';
import type { FetchRequest } from '../../../src/protocol/apis/fetch.js';
import { clusterView, endpoint, type FixtureCluster } from '../../helpers/cluster_fixture.js';
import { requestContext } from '../../helpers/handler_context.js';

const RATE = 'leader.replication.throttled.rate';

function view(over: Partial<FixtureCluster> = {}) {
  return clusterView({
    localId: 1, brokers: [endpoint(1), endpoint(2), endpoint(3)],
    topics: [{ name: 't', partitions: 2, replicas: [1, 2, 3], isr: [1, 2], configs: { 'leader.replication.throttled.replicas': '0:3,0:2,1:1' } }],
    ...over,
  });
}

describe('LeaderThrottle', () => {
  it('applies to listed followers outside the ISR only', () => {
    const cluster = view();
    const t = cluster.topic('t')!;
    const throttle = new LeaderThrottle(cluster);
    assert.equal(throttle.applies(t, 0, 3), true, 'listed, out of sync');
    assert.equal(throttle.applies(t, 0, 2), false, 'listed, in sync');
    assert.equal(throttle.applies(t, 1, 3), false, 'not listed');
  });

  it('takes the per-broker rate over the cluster default and is unthrottled by default', () => {
    let now = 0;
    const unthrottled = new LeaderThrottle(view(), () => now);
    unthrottled.record(1e12);
    assert.equal(unthrottled.exceeded(), false);
    const byDefault = new LeaderThrottle(view({ brokerConfigs: { '': { [RATE]: '1000' } } }), () => now);
    byDefault.record(20_000);
    assert.equal(byDefault.exceeded(), true, '20 kB in the first samples is over 1 kB/s');
    const own = new LeaderThrottle(view({ brokerConfigs: { '': { [RATE]: '1000' }, '1': { [RATE]: '1000000' } } }), () => now);
    own.record(20_000);
    assert.equal(own.exceeded(), false, "the broker's own rate wins");
    now = 60_000;
    assert.equal(byDefault.exceeded(), false, 'old samples expire');
  });
});

describe('Fetch under the leader throttle', () => {
  const cluster = view({ topics: [{ name: 't', partitions: 2, replicas: [1, 2, 3], isr: [1, 2], configs: { 'leader.replication.throttled.replicas': '*' } }] });
  const request = (replicaId: number): FetchRequest => ({
    clusterId: null, replicaId: -1, replicaState: { replicaId, replicaEpoch: 1 }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0,
    sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [], rackId: '',
    topics: [{ topic: 't', topicId: cluster.topic('t')!.id, partitions: [0, 1].map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: 0, partitionMaxBytes: 1 << 20, replicaDirectoryId: '0'.repeat(32) })) }],
  });
  const deps = (exceeded: boolean, routed: FetchItem[], recorded: number[]): FetchDeps => ({
    cluster,
    partitions: { handleOf: (_t, p) => 10 + p },
    router: { fetch: (items) => { routed.push(...items); return Promise.resolve({ parts: items.map((_, slot) => ({ slot, errorCode: 0, highWatermark: 5, logStartOffset: 0, ranges: [{ segment: 0, position: 0, length: 100 }] as never, diverging: null })), waited: false }); } },
    segments: { readRanges: () => Promise.resolve([Buffer.alloc(100)]), fileRanges: () => Promise.resolve([]) },
    metrics: { addBytesOut: () => {}, addReplicaBytesServed: () => {}, recordFetchServe: () => {} },
    limits: { fetchMaxBytes: 55 << 20, messageMaxBytes: 1 << 20 },
    leaderThrottle: new (class extends LeaderThrottle {
      override exceeded(): boolean { return exceeded; }
      override record(bytes: number): void { recorded.push(bytes); }
    })(cluster),
  });

  it('asks for nothing of an out-of-sync follower while exceeded, and counts what it is sent otherwise', async () => {
    for (const exceeded of [false, true]) {
      const routed: FetchItem[] = [];
      const recorded: number[] = [];
      await fetchHandler.handle(requestContext(1, 17), request(3), deps(exceeded, routed, recorded));
      assert.deepEqual(routed.map((i) => i.partitionMaxBytes), exceeded ? [0, 0] : [1 << 20, 1 << 20]);
      assert.deepEqual(recorded, [200]);
    }
  });

  it('never throttles an in-sync follower', async () => {
    const routed: FetchItem[] = [];
    const recorded: number[] = [];
    await fetchHandler.handle(requestContext(1, 17), request(2), deps(true, routed, recorded));
    assert.deepEqual(routed.map((i) => i.partitionMaxBytes), [1 << 20, 1 << 20]);
    assert.deepEqual(recorded, []);
  });
});
