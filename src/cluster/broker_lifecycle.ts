// A broker's standing with the active controller (KRaft's BrokerLifecycleManager): it registers
// with an incarnation id drawn once per process start, heartbeats every interval with the
// metadata offset it has applied, and is unfenced once that offset reaches its registration.
// It registers again when the controller no longer knows its epoch (STALE_BROKER_EPOCH or
// BROKER_ID_NOT_REGISTERED: another incarnation registered, or a controller whose log never saw
// this registration); fenced while running (its session ran out), it goes on heartbeating and
// the controller unfences it once a heartbeat shows it caught up, as in KRaft. stop()
// sends a last heartbeat asking to shut down, so the controller moves leadership away at once.
// `unfenced()` gates the Kafka listener: it resolves once the controller has unfenced this
// broker and the local image shows it unfenced at its current epoch, so a client is never routed by an image
// older than this broker's own registration. Main thread.
import { randomBytes } from 'node:crypto';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { callActiveController, type ControllerChannel, type ControllerRequest } from './controller_channel.js';
import type { ControllerReply, HeartbeatRequest } from './metadata/controller.js';
import type { AppliedMetadata } from './metadata_follower.js';
import type { BrokerEndpointRecord } from './metadata/records.js';

export interface BrokerIdentity {
  readonly brokerId: number;
  /** The listeners clients reach this broker on. */
  readonly endpoints: readonly BrokerEndpointRecord[];
  readonly rack: string | null;
}

export interface LifecycleTimings {
  /** broker.heartbeat.interval.ms: also the bound on one registration or heartbeat attempt. */
  readonly heartbeatIntervalMs: number;
  /** broker.session.timeout.ms: how long an unfencing may take to show in the local image. */
  readonly sessionTimeoutMs: number;
}

export type LifecycleState = 'registering' | 'fenced' | 'running' | 'stopped';

/** What the lifecycle reports (a logger's shape, so the broker's pino logger fits). */
export interface LifecycleLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Heartbeat errors that mean the controller does not know this registration. */
const FORGOTTEN: ReadonlySet<number> = new Set([ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED]);

export class BrokerLifecycle {
  readonly incarnationId = randomBytes(16).toString('hex');
  private current: LifecycleState = 'registering';
  private epoch = -1;
  private stopping = false;
  private wake: (() => void) | null = null;
  private started = false;
  private readonly firstUnfence: Promise<void>;
  private markUnfenced!: () => void;

  constructor(
    private readonly identity: BrokerIdentity,
    private readonly channel: ControllerChannel,
    private readonly metadata: AppliedMetadata,
    private readonly timings: LifecycleTimings,
    private readonly log: LifecycleLog,
  ) {
    this.firstUnfence = new Promise((resolve) => (this.markUnfenced = resolve));
  }

  get state(): LifecycleState {
    return this.current;
  }

  /** The epoch of the current registration (the offset of its record); -1 while unregistered. */
  get brokerEpoch(): number {
    return this.epoch;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    void this.run();
  }

  /** Resolves the first time this broker is unfenced and its image has applied the unfencing. */
  unfenced(): Promise<void> {
    return this.firstUnfence;
  }

  /** One last heartbeat asking to shut down (bounded by the interval), then no more. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    // The loop may be waiting for metadata that never comes; its last step is harmless beside this one.
    if (this.epoch !== -1) {
      await this.call({ kind: 'heartbeat', request: this.heartbeatOf(true) }).catch(() => undefined);
    }
    this.current = 'stopped';
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const again = this.epoch === -1 ? await this.register() : await this.heartbeat();
      if (!again) await this.sleep(this.timings.heartbeatIntervalMs);
    }
  }

  /** Returns true to go on at once (registered: heartbeat now to be unfenced soon). */
  private async register(): Promise<boolean> {
    const { brokerId, endpoints, rack } = this.identity;
    const reply = await this.call({ kind: 'registerBroker', request: { brokerId, incarnationId: this.incarnationId, endpoints, rack } });
    if (reply === null || reply.kind !== 'registerBroker') return false;
    if (reply.errorCode !== ErrorCode.NONE) {
      this.log.warn({ error: errorName(reply.errorCode) }, 'broker registration refused');
      return false;
    }
    this.epoch = reply.brokerEpoch;
    this.current = 'fenced';
    this.log.info({ brokerEpoch: this.epoch, incarnationId: this.incarnationId }, 'registered with the active controller');
    return true;
  }

  /** Returns true to go on at once (the registration was lost). */
  private async heartbeat(): Promise<boolean> {
    const reply = await this.call({ kind: 'heartbeat', request: this.heartbeatOf(false) });
    if (reply === null || reply.kind !== 'heartbeat') return false;
    if (FORGOTTEN.has(reply.errorCode)) return this.forget(errorName(reply.errorCode));
    if (reply.errorCode !== ErrorCode.NONE) {
      this.log.warn({ error: errorName(reply.errorCode) }, 'heartbeat refused');
      return false;
    }
    if (reply.isFenced) {
      // Fenced while running (its session ran out): the controller unfences it again on a
      // heartbeat that shows it caught up, as for a fresh registration; the listener stays open.
      if (this.current === 'running') this.log.warn({ brokerEpoch: this.epoch }, 'fenced by the controller');
      this.current = 'fenced';
      return false;
    }
    if (this.current !== 'running') {
      const { brokerId } = this.identity;
      const epoch = this.epoch;
      try {
        await this.metadata.until((image) => image.brokers.get(brokerId)?.fenced === false && image.brokers.get(brokerId)?.epoch === epoch, this.timings.sessionTimeoutMs);
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        return false;
      }
      this.current = 'running';
      this.log.info({ brokerEpoch: this.epoch, appliedOffset: this.metadata.appliedOffset() }, 'unfenced: caught up with the metadata log');
      this.markUnfenced();
    }
    return false;
  }

  private forget(reason: string): boolean {
    this.log.warn({ brokerEpoch: this.epoch, reason }, 'registering again');
    this.epoch = -1;
    this.current = 'registering';
    return true;
  }

  private heartbeatOf(wantShutDown: boolean): HeartbeatRequest {
    return {
      brokerId: this.identity.brokerId,
      brokerEpoch: this.epoch,
      currentMetadataOffset: this.metadata.appliedOffset(),
      wantFence: false,
      wantShutDown,
    };
  }

  /** One attempt within the interval; an unreachable or absent controller is logged and answered null. */
  private async call(request: ControllerRequest): Promise<ControllerReply | null> {
    try {
      return await callActiveController(this.channel, request, this.timings.heartbeatIntervalMs);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      this.log.warn({ request: request.kind, error: errorName(err.code) }, 'no answer from the active controller');
      return null;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
