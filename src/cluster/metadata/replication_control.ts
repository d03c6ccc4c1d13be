// The controller's rules for partition leadership, ISR and replica sets, pure (KRaft's
// ReplicationControlManager and PartitionChangeBuilder): leader election from the ISR when a broker
// is fenced, shuts down, re-registers or unregisters; leadership back to a returning broker that
// was the last ISR member; AlterPartition from partition leaders with the partition epoch as the
// compare-and-set token, completing a reassignment once its target is in sync; preferred and
// unclean elections (ElectLeaders); the periodic check that moves leadership back to preferred
// replicas; reassignments started, replaced and cancelled (AlterPartitionReassignments) and
// listed. Each function reads one image and returns the records of one batch (and the
// per-partition answers); the controller proposes them. Any thread.
//
// Eligible leader replicas (KIP-966) are not kept: without them the last ISR member of a
// partition stays in its ISR when it is fenced (the partition goes leaderless and waits for it),
// and only unclean election (topic config unclean.leader.election.enable, off by default) lets an
// out-of-ISR replica lead. ELR would matter once a follower may leave the ISR below
// min.insync.replicas with everything committed, which min.insync.replicas = 1 rules out today.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { IsrMember } from '../../coordinator/replication/types.js';
import type { MetadataImage, MetaTopic } from './image.js';
import type { PartitionState } from './partitions.js';
import { completed, inReassignment, reverted, started, type ReplicaSets } from './reassignment.js';
import { LEADER_UNCHANGED, MAX_REPLICAS, NO_LEADER, type MetadataRecord } from './records.js';

/** ElectLeaders' election types (KIP-460). */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

/** Whether a broker may lead or join an ISR: registered, unfenced and not in controlled shutdown. */
export type Eligible = (brokerId: number) => boolean;

/** Brokers eligible in `image`, with `leaving` counted out (the broker a batch fences) or `returning` counted in (the one it unfences). */
export function eligibility(image: MetadataImage, change: { readonly leaving?: number; readonly returning?: number } = {}): Eligible {
  return (id) => {
    if (id === change.leaving) return false;
    if (id === change.returning) return true;
    const b = image.brokers.get(id);
    return b !== undefined && !b.fenced && !b.inControlledShutdown;
  };
}

/**
 * Whether a broker is still warming up (new to the cluster, BrokerRegistration.warming): it hosts
 * replicas and joins ISRs, but leads only where no warm replica can, so a cold page cache and
 * JIT take no client traffic while a warm replica could.
 */
export type Warming = (brokerId: number) => boolean;

export const NONE_WARMING: Warming = () => false;

export function warmingOf(image: MetadataImage): Warming {
  return (id) => image.brokers.get(id)?.warming === true;
}

/** The leader a new partition starts with: its first replica that is warm, else its first. */
export function firstLeader(replicas: readonly number[], warming: Warming): number {
  return replicas.find((r) => !warming(r)) ?? replicas[0]!;
}

/** Topic config that lets an out-of-sync replica lead when no ISR member can. */
export const UNCLEAN_ELECTION_CONFIG = 'unclean.leader.election.enable';

function uncleanAllowed(t: MetaTopic): boolean {
  return t.configs[UNCLEAN_ELECTION_CONFIG] === 'true';
}

interface Target {
  readonly leader: number;
  readonly isr: readonly number[];
  /** The replica sets, when the change sets them too. */
  readonly sets?: ReplicaSets;
}

/**
 * Leader and ISR once `isr` is the partition's ISR: the current leader stays while it is an
 * eligible ISR member; otherwise the first eligible ISR member in replica order (the preferred
 * replica first) that is not warming up, or else the first that is; otherwise, when `unclean`,
 * the first eligible replica that is not being added (an adding replica may hold nothing yet),
 * alone in the ISR; otherwise no leader.
 */
export function elect(s: PartitionState, isr: readonly number[], eligible: Eligible, unclean: boolean, warming: Warming = NONE_WARMING): Target {
  if (s.leader !== NO_LEADER && isr.includes(s.leader) && eligible(s.leader)) return { leader: s.leader, isr };
  const candidates = s.replicas.filter((r) => isr.includes(r) && eligible(r));
  const clean = candidates.find((r) => !warming(r)) ?? candidates[0];
  if (clean !== undefined) return { leader: clean, isr };
  const dirty = unclean ? s.replicas.find((r) => eligible(r) && !s.addingReplicas.includes(r)) : undefined;
  return dirty !== undefined ? { leader: dirty, isr: [dirty] } : { leader: NO_LEADER, isr };
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** The PartitionChange record taking `s` to `target`, or null when nothing changes. */
function change(topicId: string, partition: number, s: PartitionState, target: Target): MetadataRecord | null {
  const leader = target.leader === s.leader ? LEADER_UNCHANGED : target.leader;
  const isr = sameIds(target.isr, s.isr) ? null : target.isr;
  const set = (next: readonly number[] | undefined, now: readonly number[]): readonly number[] | null => (next === undefined || sameIds(next, now) ? null : next);
  const replicas = set(target.sets?.replicas, s.replicas);
  const removingReplicas = set(target.sets?.removingReplicas, s.removingReplicas);
  const addingReplicas = set(target.sets?.addingReplicas, s.addingReplicas);
  if (leader === LEADER_UNCHANGED && isr === null && replicas === null && removingReplicas === null && addingReplicas === null) return null;
  return { type: 'partitionChange', topicId, partition, leader, isr, replicas, removingReplicas, addingReplicas };
}

/** The partition's state once `rec` (a change of `s`, or null for none) applies, as delta.ts applies it. */
function changed(s: PartitionState, rec: MetadataRecord | null): PartitionState {
  if (rec === null || rec.type !== 'partitionChange') return s;
  const leaderSet = rec.leader !== LEADER_UNCHANGED;
  return {
    replicas: rec.replicas ?? s.replicas, isr: rec.isr ?? s.isr,
    removingReplicas: rec.removingReplicas ?? s.removingReplicas, addingReplicas: rec.addingReplicas ?? s.addingReplicas,
    leader: leaderSet ? rec.leader : s.leader, leaderEpoch: leaderSet ? s.leaderEpoch + 1 : s.leaderEpoch, partitionEpoch: s.partitionEpoch + 1,
  };
}

/**
 * Leader and ISR over new replica sets: the current leader stays while it is an eligible member
 * of the new ISR, otherwise a clean election in the new replica order; null when the new ISR is
 * empty (only adding replicas were in sync) and no unclean election may fill it.
 */
function settle(s: PartitionState, sets: ReplicaSets, eligible: Eligible, unclean: boolean, warming: Warming): Target | null {
  const next: PartitionState = { ...s, ...sets };
  const target = elect(next, sets.isr, eligible, sets.isr.length === 0 && unclean, warming);
  return target.isr.length === 0 ? null : { ...target, sets: { ...sets, isr: target.isr } };
}

/**
 * Broker `id` stops being eligible (fenced, shutting down, re-registered or unregistered): it
 * leaves every ISR it is in, except as the last member, and every partition it led gets a new
 * leader from what remains (KRaft's handleBrokerFenced). `eligible` already counts it out.
 */
export function departureChanges(image: MetadataImage, id: number, eligible: Eligible): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  const warming = warmingOf(image);
  for (const t of image.topicsById.values()) {
    for (const p of t.table.hosting(id)) {
      const s = t.table.state(p);
      if (s.leader !== id && !s.isr.includes(id)) continue;
      const rest = s.isr.filter((r) => r !== id);
      // The last ISR member stays: it is the replica holding every committed record.
      const rec = change(t.id, p, s, elect(s, rest.length > 0 ? rest : s.isr, eligible, uncleanAllowed(t), warming));
      if (rec !== null) out.push(rec);
    }
  }
  return out;
}

/**
 * Broker `id` is eligible again (unfenced): the leaderless partitions it hosts hold an election,
 * which it wins where it is the ISR member left (or, with unclean election, any replica). It
 * does not rejoin ISRs here; the partition leader's AlterPartition adds it once it caught up.
 */
export function returnChanges(image: MetadataImage, id: number, eligible: Eligible): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  const warming = warmingOf(image);
  for (const t of image.topicsById.values()) {
    for (const p of t.table.hosting(id)) {
      if (t.table.leader(p) !== NO_LEADER) continue;
      const s = t.table.state(p);
      const rec = change(t.id, p, s, elect(s, s.isr, eligible, uncleanAllowed(t), warming));
      if (rec !== null) out.push(rec);
    }
  }
  return out;
}

// ---- AlterPartition ----

export interface AlterPartitionData {
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly newIsr: readonly IsrMember[];
  /** 1: recovering from an unclean election (KIP-704); Sluice's partitions are always recovered (0). */
  readonly leaderRecoveryState: number;
}

export interface AlterPartitionTopic {
  /** The topic by id (v2+), or null when it is named. */
  readonly topicId: string | null;
  /** The topic by name (v0-1), or null when it is given by id. */
  readonly topicName: string | null;
  readonly partitions: readonly AlterPartitionData[];
}

export interface AlterPartitionRequest {
  readonly brokerId: number;
  readonly brokerEpoch: number;
  readonly topics: readonly AlterPartitionTopic[];
}

export interface AlterPartitionResult {
  readonly partition: number;
  readonly errorCode: ErrorCode;
  /** The partition's state after the request (its state as is, when refused; -1s when unknown). */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly partitionEpoch: number;
}

export interface AlterPartitionTopicResult {
  readonly topicId: string | null;
  readonly topicName: string | null;
  readonly partitions: readonly AlterPartitionResult[];
}

function stateResult(partition: number, errorCode: ErrorCode, s: PartitionState | null): AlterPartitionResult {
  return s === null
    ? { partition, errorCode, leaderId: NO_LEADER, leaderEpoch: -1, isr: [], partitionEpoch: -1 }
    : { partition, errorCode, leaderId: s.leader, leaderEpoch: s.leaderEpoch, isr: s.isr, partitionEpoch: s.partitionEpoch };
}

/**
 * The error AlterPartition answers for one partition, in KRaft's order
 * (validateAlterPartitionData), or NONE. NEW_LEADER_ELECTED does not arise: a leader that
 * becomes ineligible loses its leadership in the batch that fences it, so an accepted change
 * never moves the leader.
 */
function alterPartitionError(senderId: number, s: PartitionState, d: AlterPartitionData, image: MetadataImage, eligible: Eligible): ErrorCode {
  // A leader ahead of this controller talks to a stale controller.
  if (d.leaderEpoch > s.leaderEpoch || d.partitionEpoch > s.partitionEpoch) return ErrorCode.NOT_CONTROLLER;
  if (d.leaderEpoch < s.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
  if (senderId !== s.leader) return ErrorCode.INVALID_REQUEST;
  if (d.partitionEpoch < s.partitionEpoch) return ErrorCode.INVALID_UPDATE_VERSION;
  if (d.leaderRecoveryState !== 0) return ErrorCode.INVALID_REQUEST;
  const ids = d.newIsr.map((m) => m.brokerId);
  if (new Set(ids).size !== ids.length || !ids.includes(s.leader) || ids.some((id) => !s.replicas.includes(id))) return ErrorCode.INVALID_REQUEST;
  for (const m of d.newIsr) {
    if (!eligible(m.brokerId)) return ErrorCode.INELIGIBLE_REPLICA;
    if (m.brokerEpoch !== -1 && image.brokers.get(m.brokerId)?.epoch !== m.brokerEpoch) return ErrorCode.INELIGIBLE_REPLICA;
  }
  return ErrorCode.NONE;
}

/**
 * A partition leader's ISR changes: each valid one becomes a PartitionChange (partition epoch
 * +1) and is answered with the state it leads to; a refused one with its error and the state
 * as it is. The sender is known to be registered at its epoch. A partition named twice is
 * refused the second time (INVALID_REQUEST): its epoch would have moved under it.
 */
export function alterPartition(image: MetadataImage, req: AlterPartitionRequest): { records: MetadataRecord[]; topics: AlterPartitionTopicResult[] } {
  const eligible = eligibility(image);
  const warming = warmingOf(image);
  const records: MetadataRecord[] = [];
  const seen = new Set<string>();
  const topics = req.topics.map((rt): AlterPartitionTopicResult => {
    const t = rt.topicId !== null ? image.topicsById.get(rt.topicId) : image.topicsByName.get(rt.topicName ?? '');
    const partitions = rt.partitions.map((d): AlterPartitionResult => {
      if (t === undefined) return stateResult(d.partition, rt.topicId !== null ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
      const s = t.table.record(t.id, d.partition);
      if (s === undefined) return stateResult(d.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
      const key = `${t.id}:${d.partition}`;
      if (seen.has(key)) return stateResult(d.partition, ErrorCode.INVALID_REQUEST, s);
      seen.add(key);
      const code = alterPartitionError(req.brokerId, s, d, image, eligible);
      if (code !== ErrorCode.NONE) return stateResult(d.partition, code, s);
      const isr = d.newIsr.map((m) => m.brokerId);
      // An ISR that now holds every target replica completes the partition's reassignment in the same change.
      const done = completed({ ...s, isr });
      const rec = change(t.id, d.partition, s, (done === null ? null : settle(s, done, eligible, false, warming)) ?? { leader: s.leader, isr });
      if (rec !== null) records.push(rec);
      return stateResult(d.partition, ErrorCode.NONE, changed(s, rec));
    });
    return { topicId: rt.topicId, topicName: rt.topicName, partitions };
  });
  return { records, topics };
}

// ---- ElectLeaders and the leader imbalance check ----

export interface ElectionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: ErrorCode;
  readonly message: string | null;
}

/** The elected leader of one partition by `type`, or the error that says why there is none. */
function electionOf(t: MetaTopic, p: number, type: number, eligible: Eligible, warming: Warming): Target | { readonly error: ErrorCode; readonly message: string } {
  const s = t.table.state(p);
  if (type === ElectionType.PREFERRED) {
    const preferred = s.replicas[0]!;
    if (s.leader === preferred) return { error: ErrorCode.ELECTION_NOT_NEEDED, message: 'the preferred replica leads' };
    if (!s.isr.includes(preferred) || !eligible(preferred)) {
      return { error: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, message: `preferred replica ${preferred} is not an eligible ISR member` };
    }
    if (warming(preferred)) return { error: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, message: `preferred replica ${preferred} is warming up` };
    return { leader: preferred, isr: s.isr };
  }
  if (s.leader !== NO_LEADER) return { error: ErrorCode.ELECTION_NOT_NEEDED, message: 'the partition has a leader' };
  const target = elect(s, s.isr, eligible, true, warming);
  if (target.leader === NO_LEADER) return { error: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, message: 'no replica is eligible to lead' };
  return target;
}

/**
 * ElectLeaders: a preferred (or unclean) election for the named partitions, or with `partitions`
 * null for every partition, then answering only those that changed or failed for another
 * reason than ELECTION_NOT_NEEDED (as Kafka does).
 */
export function electLeaders(
  image: MetadataImage,
  type: number,
  partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null,
): { records: MetadataRecord[]; results: ElectionResult[] } {
  const eligible = eligibility(image);
  const warming = warmingOf(image);
  const records: MetadataRecord[] = [];
  const results: ElectionResult[] = [];
  const seen = new Set<string>();
  const one = (topic: string, p: number, all: boolean): void => {
    const t = image.topicsByName.get(topic);
    if (t === undefined || !Number.isInteger(p) || p < 0 || p >= t.table.count) {
      results.push({ topic, partition: p, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: 'unknown topic or partition' });
      return;
    }
    const key = `${topic}:${p}`;
    if (seen.has(key)) return;
    seen.add(key);
    const e = electionOf(t, p, type, eligible, warming);
    if ('error' in e) {
      if (!all || e.error !== ErrorCode.ELECTION_NOT_NEEDED) results.push({ topic, partition: p, errorCode: e.error, message: e.message });
      return;
    }
    records.push(change(t.id, p, t.table.state(p), e)!);
    results.push({ topic, partition: p, errorCode: ErrorCode.NONE, message: null });
  };
  if (partitions === null) {
    for (const t of image.topicsByName.values()) for (let p = 0; p < t.table.count; p++) one(t.name, p, true);
  } else {
    for (const tp of partitions) for (const p of tp.partitions) one(tp.topic, p, false);
  }
  return { records, results };
}

/**
 * The automatic preferred-leader check: every broker whose preferred partitions are led by
 * others for more than `percentage` % of them gets those back where it is an eligible ISR
 * member, at most `max` elections per batch (the caller checks again soon while the batch is
 * full).
 */
export function imbalanceElections(image: MetadataImage, percentage: number, max: number): MetadataRecord[] {
  const preferred = new Map<number, { total: number; elsewhere: number }>();
  for (const t of image.topicsById.values()) {
    for (let p = 0; p < t.table.count; p++) {
      const id = t.table.replicas(p)[0]!;
      const n = preferred.get(id) ?? { total: 0, elsewhere: 0 };
      n.total++;
      if (t.table.leader(p) !== id) n.elsewhere++;
      preferred.set(id, n);
    }
  }
  const imbalanced = new Set<number>();
  for (const [id, n] of preferred) if (n.elsewhere * 100 > n.total * percentage) imbalanced.add(id);
  return preferredElections(image, imbalanced, max, warmingOf(image));
}

/**
 * Broker `id` finished warming up: the partitions that prefer it and hold it in their ISR take
 * it as leader, at most `max` in this batch (the imbalance check hands over the rest).
 */
export function warmedElections(image: MetadataImage, id: number, max: number): MetadataRecord[] {
  const warming = warmingOf(image);
  return preferredElections(image, new Set([id]), max, (b) => b !== id && warming(b));
}

/** Preferred elections of the partitions whose preferred replica is one of `brokers`, at most `max`. */
function preferredElections(image: MetadataImage, brokers: ReadonlySet<number>, max: number, warming: Warming): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  if (brokers.size === 0) return out;
  const eligible = eligibility(image);
  for (const t of image.topicsById.values()) {
    for (let p = 0; p < t.table.count && out.length < max; p++) {
      if (!brokers.has(t.table.replicas(p)[0]!)) continue;
      const e = electionOf(t, p, ElectionType.PREFERRED, eligible, warming);
      if (!('error' in e)) out.push(change(t.id, p, t.table.state(p), e)!);
    }
  }
  return out;
}

// ---- Reassignment (KIP-455) ----

/** Bound on the partitions one AlterPartitionReassignments names. */
export const MAX_REASSIGNMENT_PARTITIONS = 100_000;

export interface ReassignmentTopic {
  readonly topic: string;
  /** Per partition the target replicas, preferred leader first; null cancels the partition's reassignment. */
  readonly partitions: readonly { readonly partition: number; readonly replicas: readonly number[] | null }[];
}

export interface ReassignmentResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: ErrorCode;
  readonly message: string | null;
}

/** A partition being reassigned, as ListPartitionReassignments reports it. */
export interface OngoingReassignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
}

function checkTarget(image: MetadataImage, replicas: readonly number[]): void {
  if (replicas.length === 0 || replicas.length > MAX_REPLICAS) {
    throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `a target needs 1 to ${MAX_REPLICAS} replicas, got ${replicas.length}`);
  }
  if (new Set(replicas).size !== replicas.length) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `target ${replicas.join(',')} names a broker twice`);
  const unknown = replicas.find((id) => !image.brokers.has(id));
  if (unknown !== undefined) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `broker ${unknown} is not registered`);
}

/**
 * The change one partition's target (or cancel, `replicas` null) makes. A target is taken from
 * the original replicas: one given while another reassignment is under way replaces it (the
 * earlier adding replicas not in the new target leave), as Kafka does. A target already in sync
 * completes at once. Cancel restores the original replicas in their order and drops the adding
 * replicas from the ISR; a leader that was an adding replica hands over as in an election.
 */
function reassignment(image: MetadataImage, t: MetaTopic, p: number, replicas: readonly number[] | null, eligible: Eligible): Target {
  const s = t.table.state(p);
  if (replicas === null && !inReassignment(s)) throw new KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, `partition ${t.name}-${p} is not being reassigned`);
  if (replicas !== null) checkTarget(image, replicas);
  const base = inReassignment(s) ? reverted(s) : s;
  const sets = replicas === null ? base : started(base, replicas);
  const target = settle(s, completed(sets) ?? sets, eligible, uncleanAllowed(t), warmingOf(image));
  if (target === null) {
    throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `partition ${t.name}-${p}: only adding replicas are in sync, and leaving them would need an unclean leader election`);
  }
  return target;
}

/** AlterPartitionReassignments: each named partition's target or cancel, answered per partition. */
export function alterPartitionReassignments(image: MetadataImage, topics: readonly ReassignmentTopic[]): { records: MetadataRecord[]; results: ReassignmentResult[] } {
  const count = topics.reduce((n, t) => n + t.partitions.length, 0);
  if (count > MAX_REASSIGNMENT_PARTITIONS) throw new KafkaError(ErrorCode.INVALID_REQUEST, `${count} partitions in one request; at most ${MAX_REASSIGNMENT_PARTITIONS}`);
  const eligible = eligibility(image);
  const records: MetadataRecord[] = [];
  const results: ReassignmentResult[] = [];
  const seen = new Set<string>();
  for (const rt of topics) {
    const t = image.topicsByName.get(rt.topic);
    for (const { partition, replicas } of rt.partitions) {
      const result = (errorCode: ErrorCode, message: string | null): void => {
        results.push({ topic: rt.topic, partition, errorCode, message });
      };
      if (t === undefined || !Number.isInteger(partition) || partition < 0 || partition >= t.table.count) {
        result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'unknown topic or partition');
        continue;
      }
      const key = `${t.id}:${partition}`;
      if (seen.has(key)) {
        result(ErrorCode.INVALID_REQUEST, 'the partition is named twice in the request');
        continue;
      }
      seen.add(key);
      try {
        const rec = change(t.id, partition, t.table.state(partition), reassignment(image, t, partition, replicas, eligible));
        if (rec !== null) records.push(rec);
        result(ErrorCode.NONE, null);
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        result(err.code, err.message);
      }
    }
  }
  return { records, results };
}

/** ListPartitionReassignments: the partitions being reassigned, of the named ones, or of all with `topics` null. */
export function listPartitionReassignments(
  image: MetadataImage,
  topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null,
): OngoingReassignment[] {
  const out: OngoingReassignment[] = [];
  const seen = new Set<string>();
  const one = (t: MetaTopic, p: number): void => {
    const key = `${t.id}:${p}`;
    if (!Number.isInteger(p) || p < 0 || p >= t.table.count || seen.has(key)) return;
    seen.add(key);
    const s = t.table.state(p);
    if (inReassignment(s)) out.push({ topic: t.name, partition: p, replicas: s.replicas, addingReplicas: s.addingReplicas, removingReplicas: s.removingReplicas });
  };
  if (topics === null) {
    for (const t of image.topicsByName.values()) for (let p = 0; p < t.table.count; p++) one(t, p);
  } else {
    for (const rt of topics) {
      const t = image.topicsByName.get(rt.topic);
      if (t !== undefined) for (const p of rt.partitions) one(t, p);
    }
  }
  return out;
}
