// `sluice cluster remove-broker ID [--force]` and `sluice cluster add-broker ID --no-move` (main
// thread of the CLI process): the last step of a decommission and the no-move way of growing.
// remove-broker refuses while any partition still lists the broker (the controller, as Kafka's,
// would leave those replicas pointing at a broker that is gone) and names the drain to run first;
// then it sends UnregisterBroker. A broker process still running then stops heartbeating and
// never registers again by itself (broker_lifecycle.ts); `sluice dev cluster remove` also stops
// it. add-broker --no-move waits, bounded by --timeout-ms, for the broker to be registered and
// unfenced, and reports that no history moves: the controller places new partitions on the
// least-loaded brokers first (replica_placement.ts), so the new one takes them before the others.

import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerStanding, ClusterMetadata, KafkaAdmin } from '../client/admin.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { UsageError } from './args.js';
import type { ParsedArgs } from './args.js';
import { MAX_INT32, timeoutOption, type AdminAction } from './connect.js';
import type { Render } from './output.js';

/** Pause between polls while add-broker waits for the broker to register. */
const JOIN_POLL_MS = 250;

/** The broker id, the verb's only argument. */
function brokerIdArgument(parsed: ParsedArgs, verb: string): number {
  const [raw, ...rest] = parsed.positionals;
  if (raw === undefined || rest.length > 0) throw new UsageError(`cluster ${verb} takes one broker id`);
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || id > MAX_INT32) throw new UsageError(`broker id must be an integer from 0 to ${MAX_INT32}, got "${raw}"`);
  return id;
}

/** Replicas per partition that still list `brokerId`, counting those a move is adding or removing. */
export function replicasOn(meta: ClusterMetadata, brokerId: number): number {
  let n = 0;
  for (const t of meta.topics) for (const p of t.partitionDetails) if (p.replicas.includes(brokerId)) n++;
  return n;
}

export interface RemovedBroker {
  brokerId: number;
  removed: true;
  /** Replicas still listing it when --force sent the request anyway. */
  replicasLeft: number;
}

export interface JoinedBroker {
  brokerId: number;
  state: BrokerStanding['state'];
  noMove: true;
  movesHistory: false;
  message: string;
}

function removeBroker(brokerId: number, force: boolean, out: Render): AdminAction {
  return async (admin) => {
    const replicasLeft = replicasOn(await admin.clusterMetadata(), brokerId);
    if (replicasLeft > 0 && !force) {
      throw new KafkaError(ErrorCode.POLICY_VIOLATION,
        `broker ${brokerId} still holds ${replicasLeft} replica(s); drain it first with \`sluice reassign plan --remove ${brokerId}\` and \`sluice reassign apply\` (or --force to leave them listing a broker that is gone)`);
    }
    await admin.unregisterBroker(brokerId);
    const result: RemovedBroker = { brokerId, removed: true, replicasLeft };
    return out(result, `broker ${brokerId} unregistered${replicasLeft > 0 ? ` (${replicasLeft} replica(s) still list it)` : ''}`);
  };
}

async function waitRegistered(admin: KafkaAdmin, brokerId: number, waitMs: number): Promise<BrokerStanding> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const b = (await admin.describeBrokers()).find((x) => x.id === brokerId);
    if (b !== undefined && b.state !== 'fenced') return b;
    if (Date.now() >= deadline) {
      throw new KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, `broker ${brokerId} is ${b === undefined ? 'not registered' : 'still fenced'} after ${waitMs} ms`);
    }
    await sleep(Math.min(JOIN_POLL_MS, Math.max(0, deadline - Date.now())));
  }
}

function addBroker(brokerId: number, waitMs: number, out: Render): AdminAction {
  return async (admin) => {
    const b = await waitRegistered(admin, brokerId, waitMs);
    const message = `broker ${brokerId} is ${b.state}; no history will move: new topics and new partitions of existing topics go to it first` +
      (b.state === 'warming' ? ' (it leads them once their replicas on it have caught up)' : '');
    const result: JoinedBroker = { brokerId, state: b.state, noMove: true, movesHistory: false, message };
    return out(result, message);
  };
}

/** The action of `cluster remove-broker|add-broker`. */
export function membershipPlan(verb: 'remove-broker' | 'add-broker', parsed: ParsedArgs, out: Render): AdminAction {
  const brokerId = brokerIdArgument(parsed, verb);
  if (verb === 'remove-broker') return removeBroker(brokerId, parsed.options.has('force'), out);
  if (!parsed.options.has('no-move')) {
    throw new UsageError('cluster add-broker needs --no-move (to move history onto the new broker: sluice reassign plan, then apply)');
  }
  return addBroker(brokerId, timeoutOption(parsed), out);
}
