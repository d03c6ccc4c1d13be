// What the consumer-group handlers share: their one dependency (the group coordinators),
// turning the coordinator's byte arrays back into Buffers for the codecs, and Kafka's
// "authorized operations not requested" marker. Main thread.
import type { GroupCalls } from '../../actors/group_directory.js';

export interface GroupDeps {
  readonly groups: GroupCalls;
}

/** Byte fields come back from a shard as Buffers or plain Uint8Arrays; the codecs take Buffers. */
export function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** INT32_MIN: the client did not ask for authorized operations. */
export const OPERATIONS_NOT_REQUESTED = -2147483648;
