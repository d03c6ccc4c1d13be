// A broker's standing with the active controller (KRaft's BrokerLifecycleManager): it registers
// with an incarnation id drawn once per process start, heartbeats every interval with the
// metadata offset it has applied, and is unfenced once that offset reaches its registration.
// It registers again when the controller no longer knows its epoch (STALE_BROKER_EPOCH or
// BROKER_ID_NOT_REGISTERED: another incarnation registered, or a controller whose log never saw
// this registration), except after an operator unregistered it (UnregisterBroker, the last step
// of a decommission: its own image has applied past its registration and no longer lists it).
// Then it is 'removed': it stops heartbeating and never registers again, so a removed broker left
// running does not come back as a member by itself (Kafka's broker likewise does not re-register,
// it heartbeats on in vain); restarting the process registers the id again as a new incarnation.
// Fenced while running (its session ran out), it goes on heartbeating and
// the controller unfences it once a heartbeat shows it caught up, as in KRaft. shutDown() is
// KRaft's controlled shutdown: heartbeats asking to shut down, while the Kafka listener still
// serves, until the controller has moved this broker's leaderships away and every broker, this
// one too, has applied the move (shouldShutDown), or a bound passes; stop() asks once and does
// not wait.
// `unfenced()` gates the Kafka listener: it resolves once the controller has unfenced this
// broker and the local image shows it unfenced at its current epoch, so a client is never routed by an image
// older than this broker's own registration. Each heartbeat also carries whether this broker,
// while warming up (new to the cluster), is ready to lead (`warmWith`, warm_up.ts). The
// registration carries the admin HTTP address (`advertiseAdmin`), so tools that know only the
// Kafka listener find every broker's /metrics through DescribeCluster. Main thread.
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

export type LifecycleState = 'registering' | 'fenced' | 'running' | 'removed' | 'stopped';

/** What the lifecycle reports (a logger's shape, so the broker's pino logger fits). */
export interface LifecycleLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How a controlled shutdown ended. */
export type ShutdownOutcome = 'granted' | 'timed-out' | 'refused' | 'unregistered';

/**
 * How often a broker in controlled shutdown asks again. The controller grants it once the other
 * brokers' heartbeats report the move applied, so asking faster than they beat only notices sooner.
 */
export const SHUTDOWN_POLL_MS = 100;

/**
 * The wait before the next shutdown request, or null to stop asking: once granted, or once
 * `elapsedMs` has reached the bound. A wait never runs past the bound.
 */
export function shutdownWait(granted: boolean, elapsedMs: number, timeoutMs: number, pollMs: number): number | null {
  if (granted || elapsedMs >= timeoutMs) return null;
  return Math.min(pollMs, timeoutMs - elapsedMs);
}

/** Heartbeat errors that mean the controller does not know this registration. */
const FORGOTTEN: ReadonlySet<number> = new Set([ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED]);

export class BrokerLifecycle {
  readonly incarnationId = randomBytes(16).toString('hex');
  private current: LifecycleState = 'registering';
  private epoch = -1;
  private stopping = false;
  private shutdown: Promise<ShutdownOutcome> | null = null;
  private wake: (() => void) | null = null;
  private started = false;
  private readonly firstUnfence: Promise<void>;
  private markUnfenced!: () => void;
  /** Whether this broker would lead well now; never, until the broker wires its warm-up in. */
  private warm: () => boolean = () => false;
  private adminAddress: string | null = null;
  /** The current run of unanswered controller calls, for logging it once. */
  private unanswered: { readonly error: string; readonly attempts: number } | null = null;

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

  /** The probe each heartbeat reads for its `warm` flag, judged on the image whose offset it reports. */
  warmWith(probe: () => boolean): void {
    this.warm = probe;
  }

  /** The admin HTTP address (host:port) every registration from now on carries; set before start(). */
  advertiseAdmin(address: string): void {
    this.adminAddress = address;
  }

  /** Resolves the first time this broker is unfenced and its image has applied the unfencing. */
  unfenced(): Promise<void> {
    return this.firstUnfence;
  }

  /** One heartbeat asking to shut down (bounded by the interval), then no more; after shutDown() it adds nothing. */
  stop(): Promise<ShutdownOutcome> {
    return this.shutDown(0);
  }

  /**
   * Controlled shutdown: ends the heartbeat loop and asks to shut down every SHUTDOWN_POLL_MS
   * until the controller answers shouldShutDown or `timeoutMs` has passed (each request is
   * bounded by the heartbeat interval, so the whole by timeoutMs plus one interval). Only the
   * first call runs; later ones share its outcome.
   */
  shutDown(timeoutMs: number): Promise<ShutdownOutcome> {
    this.shutdown ??= this.shutDownOnce(timeoutMs);
    return this.shutdown;
  }

  private async shutDownOnce(timeoutMs: number): Promise<ShutdownOutcome> {
    this.stopping = true;
    this.wake?.();
    const outcome = this.epoch === -1 ? 'unregistered' : await this.askToShutDown(timeoutMs);
    this.current = 'stopped';
    return outcome;
  }

  private async askToShutDown(timeoutMs: number): Promise<ShutdownOutcome> {
    // The loop may be waiting for metadata that never comes; its last step is harmless beside these.
    const started = performance.now();
    for (;;) {
      const reply = await this.call({ kind: 'heartbeat', request: this.heartbeatOf(true) });
      const elapsedMs = Math.round(performance.now() - started);
      if (reply !== null && reply.kind === 'heartbeat' && FORGOTTEN.has(reply.errorCode)) {
        this.log.warn({ error: errorName(reply.errorCode), elapsedMs }, 'controlled shutdown refused: the controller does not know this registration');
        return 'refused';
      }
      const granted = reply !== null && reply.kind === 'heartbeat' && reply.errorCode === ErrorCode.NONE && reply.shouldShutDown;
      const wait = shutdownWait(granted, elapsedMs, timeoutMs, SHUTDOWN_POLL_MS);
      if (wait === null) {
        if (granted) this.log.info({ elapsedMs }, 'controlled shutdown granted: leaderships moved away');
        else if (timeoutMs > 0) this.log.warn({ elapsedMs, timeoutMs }, 'controlled shutdown not granted in time; closing anyway');
        return granted ? 'granted' : 'timed-out';
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /**
   * Beats at a fixed rate: an attempt that used up its interval without an answer (a lost
   * connection, a silent controller) is followed by the next one at once, over a new connection,
   * and the quorum naming a new controller ends the wait too, so a live broker is heard within
   * the disconnect grace a controller gives it (and a new controller gives its predecessor).
   */
  private async run(): Promise<void> {
    while (!this.stopping && this.current !== 'removed') {
      const startedAt = performance.now();
      const again = this.epoch === -1 ? await this.register() : await this.heartbeat();
      if (again) continue;
      const wait = Math.max(0, this.timings.heartbeatIntervalMs - (performance.now() - startedAt));
      await Promise.race([this.sleep(wait), this.channel.controllerChange(wait)]);
      this.wake?.();
    }
  }

  /** Returns true to go on at once (registered: heartbeat now to be unfenced soon). */
  private async register(): Promise<boolean> {
    const { brokerId, endpoints, rack } = this.identity;
    const reply = await this.call({ kind: 'registerBroker', request: { brokerId, incarnationId: this.incarnationId, endpoints, rack, adminAddress: this.adminAddress } });
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
    if (reply.errorCode === ErrorCode.BROKER_ID_NOT_REGISTERED && (await this.unregistered())) {
      this.log.warn({ brokerEpoch: this.epoch }, 'unregistered by an operator: no longer a member of the cluster; restart the process to join again');
      this.epoch = -1;
      this.current = 'removed';
      return false;
    }
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

  /**
   * Whether this broker's own image, within one interval, has applied past its registration and
   * lists no broker of its id: an UnregisterBroker committed. A controller that merely lacks the
   * registration (its log lost it) leaves the image listing it, and the broker registers again.
   */
  private async unregistered(): Promise<boolean> {
    const { brokerId } = this.identity;
    const epoch = this.epoch;
    try {
      await this.metadata.until((image) => this.metadata.appliedOffset() >= epoch && !image.brokers.has(brokerId), this.timings.heartbeatIntervalMs);
      return true;
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return false;
    }
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
      warm: !wantShutDown && this.warm(),
    };
  }

  /**
   * One attempt within the interval; an unreachable or absent controller is answered null. A run
   * of failures is logged when it starts and when its error changes, not once per interval (a
   * broker cut off from the quorum retries every heartbeat), and its end is logged with its length.
   */
  private async call(request: ControllerRequest): Promise<ControllerReply | null> {
    try {
      const reply = await callActiveController(this.channel, request, this.timings.heartbeatIntervalMs);
      if (this.unanswered !== null) {
        this.log.info({ request: request.kind, failedAttempts: this.unanswered.attempts }, 'the active controller answers again');
        this.unanswered = null;
      }
      return reply;
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      const error = errorName(err.code);
      if (this.unanswered?.error !== error) this.log.warn({ request: request.kind, error }, 'no answer from the active controller (retrying every heartbeat interval; logged again only if the error changes)');
      this.unanswered = { error, attempts: (this.unanswered?.attempts ?? 0) + 1 };
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
