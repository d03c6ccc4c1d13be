// What an AlterClientQuotas request makes of the image's client quotas, pure (KIP-546's rules as
// Kafka's controller applies them): each entry is answered once, with its entity, and either all
// of its ops apply or none does. An entity part of an unknown or repeated type, an empty or
// overlong name, an ip that is no IP address or not alone, an unknown key or one of another
// entity type's, a key set twice in one entry or a value that is not a positive
// rate is INVALID_REQUEST; removing a value that is not set is not an error. validateOnly answers
// the same and writes nothing. Run by the active controller against its working image. Main thread.
import {
  CLIENT_ID_ENTITY, IP_ENTITY, MAX_QUOTA_ENTITIES, quotaEntityKey, USER_ENTITY, validateQuotaEntity, validateQuotaValue,
  type QuotaEntity, type QuotaKey,
} from '../../coordinator/client_quotas.js';
import type { AlterClientQuotasRequest, AlterClientQuotasResult, QuotaEntityPart } from '../../protocol/apis/client_quotas.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { MetadataImage } from './image.js';
import type { MetadataRecord } from './records.js';

/** Bound on entries per request. */
export const MAX_QUOTA_ALTERATIONS = 1000;

/** The entity a request names, or INVALID_REQUEST. */
export function entityOfParts(parts: readonly QuotaEntityPart[]): QuotaEntity {
  let user: string | null | undefined;
  let clientId: string | null | undefined;
  let ip: string | null | undefined;
  for (const p of parts) {
    if (p.entityType === USER_ENTITY && user === undefined) user = p.entityName;
    else if (p.entityType === CLIENT_ID_ENTITY && clientId === undefined) clientId = p.entityName;
    else if (p.entityType === IP_ENTITY && ip === undefined) ip = p.entityName;
    else throw new KafkaError(ErrorCode.INVALID_REQUEST, `entity type ${p.entityType} is unknown, unsupported or named twice`);
  }
  const entity: QuotaEntity = { ...(user === undefined ? {} : { user }), ...(clientId === undefined ? {} : { clientId }), ...(ip === undefined ? {} : { ip }) };
  validateQuotaEntity(entity);
  return entity;
}

/** The records the request writes (none with validateOnly) and one result per entry, in request order. */
export function quotaChanges(image: MetadataImage, req: AlterClientQuotasRequest): { records: MetadataRecord[]; results: AlterClientQuotasResult[] } {
  const records: MetadataRecord[] = [];
  const results: AlterClientQuotasResult[] = [];
  const tooMany = req.entries.length > MAX_QUOTA_ALTERATIONS;
  let count = image.quotas.size;
  for (const entry of req.entries) {
    try {
      if (tooMany) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `more than ${MAX_QUOTA_ALTERATIONS} entries in one request`);
      const entity = entityOfParts(entry.entity);
      const key = quotaEntityKey(entity);
      const values: Partial<Record<QuotaKey, number>> = { ...image.quotas.get(key) };
      const existed = Object.keys(values).length > 0;
      const mine: MetadataRecord[] = [];
      const seen = new Set<string>();
      for (const op of entry.ops) {
        if (seen.has(op.key)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `quota key ${op.key} is altered twice in one entry`);
        seen.add(op.key);
        validateQuotaValue(entity, op.key, op.remove ? 1 : op.value);
        const k = op.key as QuotaKey;
        if (op.remove) {
          if (values[k] === undefined) continue;
          delete values[k];
          mine.push({ type: 'clientQuota', entity, key: k, value: null });
        } else {
          values[k] = op.value;
          mine.push({ type: 'clientQuota', entity, key: k, value: op.value });
        }
      }
      const exists = Object.keys(values).length > 0;
      const added = (exists ? 1 : 0) - (existed ? 1 : 0);
      if (count + added > MAX_QUOTA_ENTITIES) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${MAX_QUOTA_ENTITIES} quota entities`);
      count += added;
      if (!req.validateOnly) records.push(...mine);
      results.push({ errorCode: ErrorCode.NONE, errorMessage: null, entity: entry.entity });
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      results.push({ errorCode: err.code, errorMessage: err.message, entity: entry.entity });
    }
  }
  return { records, results };
}
