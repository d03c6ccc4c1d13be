// The vocabulary of the metadata quorum's Raft core: log entries, the durable election state,
// the messages voters and observers exchange, and the Ready batch the core hands its driver.
// Pure types, no I/O; any thread. Shaped after KRaft (KIP-595, KIP-630, KIP-853, KIP-996):
// offsets are Kafka offsets (0-based, the log end offset is exclusive), terms are "epochs",
// followers pull with Fetch and the leader answers with entries, a diverging epoch or a
// snapshot id, so every message maps onto a Kafka quorum API (Vote, BeginQuorumEpoch,
// EndQuorumEpoch, Fetch, FetchSnapshot) when the driver carries it over TCP.

export type NodeId = number;

/** What an entry carries. `voters` entries change membership from the moment they are appended (KIP-853). */
export type EntryKind = 'data' | 'leaderChange' | 'voters';

export interface Entry {
  readonly offset: number;
  readonly epoch: number;
  readonly kind: EntryKind;
  /** `data`: the state machine's record bytes; `voters`: encodeVoters(); `leaderChange`: empty. */
  readonly data: Uint8Array;
}

/** A point in the log: the entry before `endOffset` has epoch `epoch` (KRaft's OffsetAndEpoch). */
export interface OffsetAndEpoch {
  readonly endOffset: number;
  readonly epoch: number;
}

/** Persisted before any message that depends on it leaves the node (KRaft's quorum-state file). */
export interface HardState {
  readonly epoch: number;
  /** -1: no vote in this epoch. */
  readonly votedFor: NodeId;
  /** -1: leader of this epoch not known. */
  readonly leaderId: NodeId;
}

/** The voter set and the observers the leader should remember; learners never vote nor count toward the commit. */
export interface Membership {
  readonly voters: readonly NodeId[];
}

/** A snapshot: the state machine at `id.endOffset` (exclusive) plus the voters in force there. */
export interface SnapshotMeta {
  readonly id: OffsetAndEpoch;
  /**
   * The voters in force at `id.endOffset` with the endpoints their `voters` entry carried, as a
   * `voters` entry's bytes (encodeVoters), so a node restored from the snapshot can still reach them.
   */
  readonly votersRecord: Uint8Array;
  /** Byte length of the snapshot's data. */
  readonly size: number;
}

export interface Snapshot {
  readonly meta: SnapshotMeta;
  readonly data: Uint8Array;
}

// ---- messages (each maps onto one Kafka quorum API request or response) ----

interface Envelope {
  readonly from: NodeId;
  readonly to: NodeId;
  /** The sender's current epoch. */
  readonly epoch: number;
}

/** Vote (52). `preVote` canvasses without anyone persisting anything (KIP-996); `epoch` is then the epoch the sender would campaign in. */
export interface VoteRequest extends Envelope {
  readonly type: 'vote';
  readonly preVote: boolean;
  readonly lastEpoch: number;
  /** The sender's log end offset (exclusive). */
  readonly lastOffset: number;
}

export interface VoteResponse extends Envelope {
  readonly type: 'voteResponse';
  readonly preVote: boolean;
  readonly granted: boolean;
  /** The responder's known leader of `epoch`, or -1. */
  readonly leaderId: NodeId;
}

/** BeginQuorumEpoch (53): the new leader announces itself (and re-announces until the voter fetches). */
export interface BeginQuorumEpoch extends Envelope {
  readonly type: 'beginQuorumEpoch';
}

export interface BeginQuorumEpochResponse extends Envelope {
  readonly type: 'beginQuorumEpochResponse';
}

/**
 * EndQuorumEpoch (54): a resigning leader hands off. The first of `preferredSuccessors`
 * campaigns at once (leadership transfer); the rest back off by their rank.
 */
export interface EndQuorumEpoch extends Envelope {
  readonly type: 'endQuorumEpoch';
  readonly preferredSuccessors: readonly NodeId[];
}

/** Fetch (1) of the metadata partition: the follower's heartbeat, its acknowledgement and its read. */
export interface FetchRequest extends Envelope {
  readonly type: 'fetch';
  /** The fetcher's durable log end offset: every entry below it is on its disk. */
  readonly fetchOffset: number;
  /** Epoch of the entry just before fetchOffset (0 when fetchOffset is 0). */
  readonly lastFetchedEpoch: number;
  readonly maxBytes: number;
  /** True for observers (learners), which fetch but never vote. */
  readonly observer: boolean;
}

export interface FetchResponse extends Envelope {
  readonly type: 'fetchResponse';
  /** NONE, or why the fetch was refused (FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, ...). */
  readonly errorCode: number;
  readonly leaderId: NodeId;
  /**
   * The request's fetchOffset and lastFetchedEpoch, echoed so a fetcher applies only the answer to
   * the fetch it has outstanding (a late duplicate could otherwise truncate a repaired log). Not on
   * the Kafka wire: the driver fills them from the request the response correlates with.
   */
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly entries: readonly Entry[];
  readonly highWatermark: number;
  /** Set when the fetcher's log diverges: truncate to this epoch's end, then fetch again. */
  readonly divergingEpoch: OffsetAndEpoch | null;
  /** Set when the fetcher is below the log start: fetch this snapshot instead. */
  readonly snapshotId: OffsetAndEpoch | null;
}

/** FetchSnapshot (59): a chunk of the leader's snapshot from byte `position`. */
export interface FetchSnapshotRequest extends Envelope {
  readonly type: 'fetchSnapshot';
  readonly snapshotId: OffsetAndEpoch;
  readonly position: number;
  readonly maxBytes: number;
}

export interface FetchSnapshotResponse extends Envelope {
  readonly type: 'fetchSnapshotResponse';
  readonly errorCode: number;
  readonly leaderId: NodeId;
  readonly snapshot: SnapshotMeta | null;
  readonly position: number;
  readonly bytes: Uint8Array;
}

export type Message =
  | VoteRequest | VoteResponse
  | BeginQuorumEpoch | BeginQuorumEpochResponse
  | EndQuorumEpoch
  | FetchRequest | FetchResponse
  | FetchSnapshotRequest | FetchSnapshotResponse;

// ---- what the driver does for the core ----

/**
 * One batch of work for the driver, in this order:
 * 1. persist `hardState` (fsync) if set;
 * 2. if `truncateTo` is set, drop the log from that offset; install `snapshot` if set (it replaces the whole log);
 * 3. append `entries` and make them durable (fsync), then call `advance(ready)` or `persisted()`;
 * 4. send `messages` (only after step 1; they may go before step 3 finishes, as the core
 *    never counts an entry toward the commit before its holder has reported it durable);
 * 5. apply `committed` to the state machine, in order.
 */
export interface Ready {
  readonly hardState: HardState | null;
  readonly truncateTo: number | null;
  readonly snapshot: Snapshot | null;
  readonly entries: readonly Entry[];
  readonly messages: readonly Message[];
  readonly committed: readonly Entry[];
}

export type Role = 'unattached' | 'prospective' | 'candidate' | 'leader' | 'follower' | 'resigned' | 'observer';

/** Where a proposal stands: accepted at an offset (it may still be lost to a leader change) or refused. */
export type ProposeResult =
  | { readonly ok: true; readonly offset: number; readonly epoch: number }
  | { readonly ok: false; readonly errorCode: number; readonly leaderId: NodeId };
