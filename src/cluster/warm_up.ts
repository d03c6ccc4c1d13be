// A broker's warm-up after it joins a cluster that already holds topics (DESIGN §7; issue 15
// item 1). The controller registers such a broker as warming: it hosts replicas and joins ISRs
// but is elected leader only where no warm replica can be. This broker reports itself ready to
// lead (the heartbeat's `warm` flag) once it hosts at least one replica, every replica it hosts
// is in its ISR (caught up to the leader, which is what ISR membership means), and it has read
// the tail of those replicas' logs once, up to a byte budget, so the first consumers it serves
// as leader find the pages cached. The JIT and the connection pools to the leaders warm on the
// replication traffic itself. Main thread; the reads are the caller's (`readTail`).
import type { MetadataImage } from './metadata/image.js';

export type WarmUpState =
  /** Registered warm (an initial broker, or one that finished its warm-up): nothing to do. */
  | 'warm'
  /** Not registered yet, fenced, or hosting nothing yet. */
  | 'waiting'
  /** Some hosted replica is not in its ISR yet. */
  | 'catching-up'
  | 'reading'
  /** Caught up and read: the next heartbeat says so and the controller ends the warm-up. */
  | 'ready';

export interface WarmUpProgress {
  readonly state: WarmUpState;
  /** Replicas this broker hosts, and how many of them are in their ISR (or led here). */
  readonly replicas: number;
  readonly inSync: number;
  readonly bytesRead: number;
  readonly bytesTarget: number;
}

/** Reads up to `maxBytes` from the end of a hosted replica's log; resolves with the bytes read (0 when it has none). */
export type ReadTail = (topic: string, partition: number, maxBytes: number) => Promise<number>;

export interface WarmUpLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

interface Hosted {
  readonly topic: string;
  readonly partition: number;
  readonly inSync: boolean;
}

function hostedReplicas(image: MetadataImage, id: number): Hosted[] {
  const out: Hosted[] = [];
  for (const t of image.topicsById.values()) {
    for (const p of t.table.hosting(id)) {
      out.push({ topic: t.name, partition: p, inSync: t.table.leader(p) === id || t.table.isr(p).includes(id) });
    }
  }
  return out;
}

export class WarmUp {
  private read: 'not-started' | 'reading' | 'done' = 'not-started';
  private bytesRead = 0;
  private bytesTarget = 0;

  constructor(
    private readonly view: { readonly localId: number; readonly image: MetadataImage },
    private readonly readTail: ReadTail,
    /** Bytes of log tails read in all (0: no read warm-up). */
    private readonly budgetBytes: number,
    private readonly log: WarmUpLog,
  ) {}

  /** The heartbeat's probe: true once this warming broker is ready to lead. Starts the read warm-up when due. */
  ready(): boolean {
    return this.evaluate(true).state === 'ready';
  }

  /** Where the warm-up stands, for /v1/health; reading only starts from the heartbeat's probe. */
  progress(): WarmUpProgress {
    return this.evaluate(false);
  }

  private evaluate(startReading: boolean): WarmUpProgress {
    const image = this.view.image;
    const me = image.brokers.get(this.view.localId);
    const progress = (state: WarmUpState, replicas = 0, inSync = 0): WarmUpProgress => ({
      state, replicas, inSync, bytesRead: this.bytesRead, bytesTarget: this.bytesTarget,
    });
    if (me !== undefined && !me.warming) return progress('warm');
    if (me === undefined || me.fenced) return progress('waiting');
    const hosted = hostedReplicas(image, this.view.localId);
    const inSync = hosted.filter((h) => h.inSync).length;
    if (hosted.length === 0) return progress('waiting');
    if (inSync < hosted.length) return progress('catching-up', hosted.length, inSync);
    if (startReading && this.read === 'not-started') this.startReading(hosted);
    return progress(this.read === 'done' ? 'ready' : 'reading', hosted.length, inSync);
  }

  /** Reads each hosted replica's tail in turn, an equal share of the budget each; a failed read counts as read. */
  private startReading(hosted: readonly Hosted[]): void {
    if (this.budgetBytes === 0) {
      this.read = 'done';
      return;
    }
    this.read = 'reading';
    const share = Math.max(1, Math.floor(this.budgetBytes / hosted.length));
    this.bytesTarget = share * hosted.length;
    const started = performance.now();
    void (async () => {
      for (const h of hosted) {
        try {
          this.bytesRead += await this.readTail(h.topic, h.partition, share);
        } catch (err) {
          this.log.warn({ err, topic: h.topic, partition: h.partition }, 'warm-up read failed; counted as read');
        }
      }
      this.read = 'done';
      this.log.info({ replicas: hosted.length, bytes: this.bytesRead, ms: Math.round(performance.now() - started) }, 'warm-up read done: ready to lead');
    })();
  }
}
