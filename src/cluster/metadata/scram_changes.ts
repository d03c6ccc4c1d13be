// What an AlterUserScramCredentials request makes of the image's SCRAM credentials, pure
// (KIP-554's rules): each user is answered once, and either all of its deletions and upsertions
// apply or none does. A user named twice for one mechanism is DUPLICATE_RESOURCE, an empty name
// or an iteration count outside [4096, 16384] UNACCEPTABLE_CREDENTIAL, an unknown mechanism
// UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist RESOURCE_NOT_FOUND. An
// upsertion carries the salted password; the records keep only StoredKey and ServerKey.
// Run by the active controller against its working image. Main thread.
import { credentialFromSaltedPassword, SCRAM_MECHANISMS, type ScramMechanism } from '../../common/sasl_mechanisms.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { scramKey, type MetadataImage } from './image.js';
import { MAX_SCRAM_BYTES, MAX_SCRAM_NAME_CHARS, type MetadataRecord } from './records.js';

export interface ScramDeletionRequest {
  readonly name: string;
  /** KIP-554's code: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512. */
  readonly mechanism: number;
}

export interface ScramUpsertionRequest extends ScramDeletionRequest {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly saltedPassword: Buffer;
}

export interface AlterScramRequest {
  readonly deletions: readonly ScramDeletionRequest[];
  readonly upsertions: readonly ScramUpsertionRequest[];
}

export interface ScramUserResult {
  readonly user: string;
  readonly errorCode: ErrorCode;
  readonly message: string | null;
}

/** Bound on credentials in the cluster (each is a map entry on every node) and on alterations per request. */
export const MAX_SCRAM_CREDENTIALS = 100_000;
export const MAX_SCRAM_ALTERATIONS = 1000;

function mechanismOf(code: number): ScramMechanism {
  const m = SCRAM_MECHANISMS[code - 1];
  if (m === undefined) throw new KafkaError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, `unknown SCRAM mechanism ${code}`);
  return m;
}

function checkName(name: string): void {
  if (name === '') throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'the user name must not be empty');
  if (name.length > MAX_SCRAM_NAME_CHARS) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, `the user name is longer than ${MAX_SCRAM_NAME_CHARS} characters`);
}

/** The records the request writes and one result per user, in the order users first appear. */
export function scramChanges(image: MetadataImage, req: AlterScramRequest): { records: MetadataRecord[]; results: ScramUserResult[] } {
  const byUser = new Map<string, Array<{ readonly kind: 'delete'; readonly r: ScramDeletionRequest } | { readonly kind: 'upsert'; readonly r: ScramUpsertionRequest }>>();
  for (const r of req.deletions) byUser.set(r.name, [...(byUser.get(r.name) ?? []), { kind: 'delete', r }]);
  for (const r of req.upsertions) byUser.set(r.name, [...(byUser.get(r.name) ?? []), { kind: 'upsert', r }]);
  const records: MetadataRecord[] = [];
  const results: ScramUserResult[] = [];
  const tooMany = req.deletions.length + req.upsertions.length > MAX_SCRAM_ALTERATIONS;
  let count = image.scram.size;
  for (const [user, alterations] of byUser) {
    try {
      if (tooMany) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `more than ${MAX_SCRAM_ALTERATIONS} alterations in one request`);
      checkName(user);
      const mine: MetadataRecord[] = [];
      const seen = new Set<ScramMechanism>();
      let added = 0;
      for (const a of alterations) {
        const mechanism = mechanismOf(a.r.mechanism);
        if (seen.has(mechanism)) throw new KafkaError(ErrorCode.DUPLICATE_RESOURCE, `the ${mechanism} credential of ${user} is altered twice in one request`);
        seen.add(mechanism);
        const exists = image.scram.get(scramKey(mechanism, user)) !== undefined;
        if (a.kind === 'delete') {
          if (!exists) throw new KafkaError(ErrorCode.RESOURCE_NOT_FOUND, `${user} has no ${mechanism} credential`);
          mine.push({ type: 'removeUserScramCredential', name: user, mechanism });
          added--;
        } else {
          if (a.r.salt.length > MAX_SCRAM_BYTES) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, `the salt is longer than ${MAX_SCRAM_BYTES} bytes`);
          const c = credentialFromSaltedPassword(mechanism, a.r.saltedPassword, a.r.salt, a.r.iterations);
          mine.push({ type: 'userScramCredential', name: user, ...c });
          if (!exists) added++;
        }
      }
      if (count + added > MAX_SCRAM_CREDENTIALS) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${MAX_SCRAM_CREDENTIALS} SCRAM credentials`);
      count += added;
      records.push(...mine);
      results.push({ user, errorCode: ErrorCode.NONE, message: null });
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      results.push({ user, errorCode: err.code, message: err.message });
    }
  }
  return { records, results };
}
