// The cluster view's shared rules: leader-epoch checks, leadership, group placement by the
// offsets topic's leaders, offline replicas, replica placement and the checks on a client's
// assignment (properties over generated brokers and counts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkLeaderEpoch, coordinatorOf, leadershipOf, NO_EPOCH, OFFSETS_TOPIC, offlineReplicas, type PartitionRecord,
} from '../../../src/cluster/cluster_view.js';
import { checkAssignment, placeReplicas } from '../../../src/cluster/replica_placement.js';
import { offsetsPartitionFor } from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { clusterView, endpoint } from '../../helpers/cluster_fixture.js';

const epoch = fc.integer({ min: 0, max: 1 << 30 });

describe('checkLeaderEpoch', () => {
  it('passes the leader epoch itself and "not given", fences older epochs and calls newer ones unknown', () => {
    fc.assert(fc.property(epoch, epoch, (requested, current) => {
      const code = checkLeaderEpoch(requested, current);
      if (requested === current) assert.equal(code, ErrorCode.NONE);
      else if (requested < current) assert.equal(code, ErrorCode.FENCED_LEADER_EPOCH);
      else assert.equal(code, ErrorCode.UNKNOWN_LEADER_EPOCH);
      assert.equal(checkLeaderEpoch(NO_EPOCH, current), ErrorCode.NONE);
      assert.equal(checkLeaderEpoch(-1 - requested, current), ErrorCode.NONE, 'any negative epoch is "not given"');
    }));
  });
});

describe('leadership and group placement', () => {
  it('says who leads a partition, with its epoch, and knows no partition past the last', () => {
    const view = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 2, leaderEpoch: 3, byPartition: { 1: { leader: 2 } } }] });
    assert.deepEqual(leadershipOf(view, 't', 0), { kind: 'leader', leaderEpoch: 3 });
    assert.deepEqual(leadershipOf(view, 't', 1), { kind: 'notLeader', leaderId: 2, leaderEpoch: 3 });
    assert.deepEqual(leadershipOf(view, 't', 2), { kind: 'unknown' });
    assert.deepEqual(leadershipOf(view, 'nope', 0), { kind: 'unknown' });
  });

  it("places every group with the leader of its offsets partition, and nowhere while the topic is missing", () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 60 }), (groupId, partitions) => {
      // Partition p is led by broker (p mod 3) + 1.
      const byPartition: Record<number, { leader: number }> = {};
      for (let p = 0; p < partitions; p++) byPartition[p] = { leader: (p % 3) + 1 };
      const view = clusterView({ brokers: [endpoint(1), endpoint(2), endpoint(3)], topics: [{ name: OFFSETS_TOPIC, partitions, byPartition }] });
      assert.equal(coordinatorOf(view, groupId), (offsetsPartitionFor(groupId, partitions) % 3) + 1);
    }));
    assert.equal(coordinatorOf(clusterView(), 'g'), -1);
  });

  it('counts replicas on brokers that are not live as offline', () => {
    const view = clusterView({ brokers: [endpoint(1), endpoint(3)], topics: [{ name: 't', partitions: 1, replicas: [1, 2, 3] }] });
    assert.deepEqual(offlineReplicas(view.partition('t', 0)!, view.brokers()), [2]);
  });

  it('finds offline replicas among any ascending list of live brokers', () => {
    const ids = fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 });
    fc.assert(fc.property(ids, fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 5 }), (liveIds, replicas) => {
      const live = [...liveIds].sort((a, b) => a - b).map((id) => endpoint(id));
      const rec: PartitionRecord = { topicId: 'a'.repeat(32), partition: 0, replicas, isr: replicas, removingReplicas: [], addingReplicas: [], leader: -1, leaderEpoch: 0, partitionEpoch: 0 };
      assert.deepEqual(offlineReplicas(rec, live), replicas.filter((r) => !liveIds.includes(r)));
    }));
  });
});

const brokerIds = fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 9 }).map((ids) => ids.sort((a, b) => a - b));

describe('placeReplicas', () => {
  it('gives every partition replication-factor distinct live brokers and spreads leaders evenly', () => {
    fc.assert(fc.property(brokerIds, fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 9 }), (live, from, count, rfWanted) => {
      const rf = Math.min(rfWanted, live.length);
      const placed = placeReplicas(live, from, count, rf);
      assert.equal(placed.length, count);
      const leaders = new Map<number, number>();
      for (const replicas of placed) {
        assert.equal(replicas.length, rf);
        assert.equal(new Set(replicas).size, rf);
        for (const r of replicas) assert.ok(live.includes(r));
        leaders.set(replicas[0]!, (leaders.get(replicas[0]!) ?? 0) + 1);
        checkAssignment([replicas], live, rf);
      }
      const counts = live.map((id) => leaders.get(id) ?? 0);
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `leaders spread unevenly: ${counts.join(',')}`);
    }));
  });

  it('refuses a replication factor above the live brokers, or below 1, with INVALID_REPLICATION_FACTOR', () => {
    fc.assert(fc.property(brokerIds, fc.integer({ min: 1, max: 5 }), (live, extra) => {
      assert.throws(() => placeReplicas(live, 0, 1, live.length + extra), (e: unknown) =>
        e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR && e.message.includes(`larger than available brokers: ${live.length}`));
    }));
    assert.throws(() => placeReplicas([1], 0, 1, 0), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR);
  });
});

describe('checkAssignment', () => {
  const invalid = (e: unknown): boolean => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICA_ASSIGNMENT;
  it('refuses lists of unequal length, repeated brokers and brokers that are not live', () => {
    assert.doesNotThrow(() => checkAssignment([[1, 2], [2, 1]], [1, 2], 2));
    assert.throws(() => checkAssignment([[1, 2], [2]], [1, 2], 2), invalid);
    assert.throws(() => checkAssignment([[1, 1]], [1, 2], 2), invalid);
    assert.throws(() => checkAssignment([[1, 7]], [1, 2], 2), invalid);
  });
});
