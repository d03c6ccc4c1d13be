// A model of what the controller does with the executor's effects, for the executor's property
// tests and the expansion simulation: KIP-455 reassignments (during a move the replica set is the
// target followed by the original replicas not in it, with adding and removing; it completes when
// the adding replicas caught up; an empty target cancels back to the original set), preferred-leader
// elections after a reorder, and the config values IncrementalAlterConfigs writes. Tests only.
import type { Assignment, ConfigEntry, ExecutorEffect, PartitionObservation } from '../../../src/cluster/expansion/executor.js';

interface ModelPartition {
  readonly topic: string;
  readonly partition: number;
  replicas: number[];
  /** The replica set before the reassignment in progress; null when none is. */
  original: number[] | null;
  target: number[] | null;
  leader: number;
}

export const partitionKey = (topic: string, partition: number): string => `${topic}:${partition}`;

export class Kip455Controller {
  readonly partitions = new Map<string, ModelPartition>();
  readonly configs = new Map<string, string>();
  /** Partitions with a reassignment in progress, kept apart so that a million-partition model answers fast. */
  private readonly moving = new Set<string>();
  /** Partitions changed since the last `drainChanged()`. */
  private changed = new Set<string>();

  constructor(assignment: readonly Assignment[], leaders?: ReadonlyMap<string, number>, configs: readonly ConfigEntry[] = []) {
    for (const a of assignment) {
      const key = partitionKey(a.topic, a.partition);
      this.partitions.set(key, { topic: a.topic, partition: a.partition, replicas: [...a.replicas], original: null, target: null, leader: leaders?.get(key) ?? a.replicas[0]! });
    }
    for (const c of configs) if (c.value !== null) this.configs.set(configKey(c), c.value);
  }

  /** Applies the effects the executor emitted, as the controller and the brokers would. */
  apply(effects: readonly ExecutorEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'submit') for (const t of e.targets) this.reassign(t);
      else if (e.kind === 'cancel') for (const p of e.partitions) this.cancel(partitionKey(p.topic, p.partition));
      else if (e.kind === 'elect-leaders') {
        for (const c of e.changes) {
          const p = this.get(partitionKey(c.topic, c.partition));
          if (p.original === null) p.replicas = [...c.to];
          if (p.replicas.includes(c.to[0]!)) p.leader = c.to[0]!;
          this.changed.add(partitionKey(c.topic, c.partition));
        }
      } else if (e.kind === 'set-configs') {
        for (const c of e.entries) {
          if (c.value === null) this.configs.delete(configKey(c));
          else this.configs.set(configKey(c), c.value);
        }
      }
    }
  }

  private get(key: string): ModelPartition {
    const p = this.partitions.get(key);
    if (p === undefined) throw new Error(`unknown partition ${key}`);
    return p;
  }

  private reassign(t: Assignment): void {
    const key = partitionKey(t.topic, t.partition);
    const p = this.get(key);
    const original = p.original ?? p.replicas;
    const target = [...t.replicas];
    this.changed.add(key);
    if (target.every((r) => original.includes(r))) {
      // Nothing to copy: the reassignment completes at once (a reorder or a pure removal).
      this.finish(p, target);
      return;
    }
    p.original = [...original];
    p.target = target;
    this.moving.add(key);
    p.replicas = [...target, ...original.filter((r) => !target.includes(r))];
  }

  private finish(p: ModelPartition, replicas: number[]): void {
    this.moving.delete(partitionKey(p.topic, p.partition));
    p.replicas = replicas;
    p.original = null;
    p.target = null;
    if (!replicas.includes(p.leader)) p.leader = replicas[0]!;
  }

  private cancel(key: string): void {
    const p = this.get(key);
    if (p.original === null) return;
    this.finish(p, p.original);
    this.changed.add(key);
  }

  /** The adding replicas of `key` caught up: the reassignment completes. */
  complete(key: string): void {
    const p = this.get(key);
    if (p.target === null) return;
    this.finish(p, p.target);
    this.changed.add(key);
  }

  reassigning(): string[] {
    return [...this.moving];
  }

  observe(key: string): PartitionObservation {
    const p = this.get(key);
    const original = p.original ?? p.replicas;
    const target = p.target ?? p.replicas;
    return {
      topic: p.topic,
      partition: p.partition,
      replicas: [...p.replicas],
      addingReplicas: target.filter((r) => !original.includes(r)),
      removingReplicas: original.filter((r) => !target.includes(r)),
      leader: p.leader,
    };
  }

  drainChanged(): PartitionObservation[] {
    const out = [...this.changed].sort().map((k) => this.observe(k));
    this.changed = new Set();
    return out;
  }

  assignment(): Assignment[] {
    return [...this.partitions.values()].map((p) => ({ topic: p.topic, partition: p.partition, replicas: [...p.replicas] }));
  }
}

export const configKey = (c: { resource: string; name: string; key: string }): string => `${c.resource}|${c.name}|${c.key}`;
