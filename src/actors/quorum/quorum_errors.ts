// The typed failure of the metadata quorum's storage: what was found damaged or inconsistent on
// disk, carried as KAFKA_STORAGE_ERROR (the code a storage fault has on the wire). Any thread.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

/** Which part of the quorum's storage is unusable. */
export type QuorumStorageFault = 'corrupt-quorum-state' | 'corrupt-snapshot' | 'log-gap' | 'log-mismatch';

export class QuorumStorageError extends KafkaError {
  constructor(
    readonly fault: QuorumStorageFault,
    message: string,
  ) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
    this.name = 'QuorumStorageError';
  }
}
