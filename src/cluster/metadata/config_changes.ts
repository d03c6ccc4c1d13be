// What an alter-configs request makes of one resource's dynamic overrides, pure: the
// IncrementalAlterConfigs operations (SET, DELETE, and APPEND/SUBTRACT on list configs) applied
// to the current overrides, or AlterConfigs' wholesale replacement, and the config records that
// turn the old overrides into the new ones. Run by the controller against its working image, so
// concurrent changes to one resource compose. Main thread (the active controller).
import { ConfigOperation as ConfigOp } from '../../protocol/apis/alter_configs.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { MetadataRecord } from './records.js';

export interface ConfigChange {
  readonly name: string;
  /** A ConfigOperation; 'replace' requests carry SET only. */
  readonly op: number;
  /** Null only with DELETE. */
  readonly value: string | null;
}

export interface AlterConfigsRequest {
  readonly resourceType: number;
  /** A topic name, or for brokers a broker id ('' for the cluster-wide default). */
  readonly resourceName: string;
  /** 'incremental': each change applies to the current overrides; 'replace': the changes become the overrides and every other override goes. */
  readonly mode: 'incremental' | 'replace';
  readonly changes: readonly ConfigChange[];
  /** Validated and answered, nothing written. */
  readonly validateOnly: boolean;
}

/** Bound on a config name's length. */
export const MAX_CONFIG_NAME_LENGTH = 255;
/** Bound on a config value's length (a throttled-replica list of every partition of a large topic fits). */
export const MAX_CONFIG_VALUE_LENGTH = 256 * 1024;
/** Bound on the changes of one resource in one request. */
export const MAX_CHANGES_PER_RESOURCE = 1000;

function listItems(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * The overrides after `req` (before any validation of names and values against the resource's
 * schema). Throws INVALID_REQUEST for a malformed request (unknown operation, a key named twice,
 * a missing value), INVALID_CONFIG for APPEND/SUBTRACT on a config that is not a list, and
 * POLICY_VIOLATION past the size bounds.
 */
export function changedConfigs(before: Readonly<Record<string, string>>, req: AlterConfigsRequest, isList: (name: string) => boolean): Record<string, string> {
  if (req.changes.length > MAX_CHANGES_PER_RESOURCE) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `more than ${MAX_CHANGES_PER_RESOURCE} config changes for one resource`);
  const named = new Set<string>();
  const after: Record<string, string> = req.mode === 'replace' ? {} : { ...before };
  for (const c of req.changes) {
    if (named.has(c.name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `config '${c.name.slice(0, MAX_CONFIG_NAME_LENGTH)}' is named twice`);
    named.add(c.name);
    if (c.name.length > MAX_CONFIG_NAME_LENGTH) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `a config name is longer than ${MAX_CONFIG_NAME_LENGTH}`);
    if (c.op !== ConfigOp.DELETE && c.value === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, `config '${c.name}' has no value`);
    const value = c.value ?? '';
    switch (c.op) {
      case ConfigOp.SET:
        after[c.name] = value;
        break;
      case ConfigOp.DELETE:
        if (req.mode === 'replace') throw new KafkaError(ErrorCode.INVALID_REQUEST, `config '${c.name}' has no value`);
        delete after[c.name];
        break;
      case ConfigOp.APPEND:
      case ConfigOp.SUBTRACT: {
        if (req.mode === 'replace') throw new KafkaError(ErrorCode.INVALID_REQUEST, `operation ${c.op} in a wholesale replacement`);
        if (!isList(c.name)) throw new KafkaError(ErrorCode.INVALID_CONFIG, `config '${c.name}' is not a list: it takes no APPEND or SUBTRACT`);
        const items = listItems(after[c.name]);
        const given = listItems(value);
        const next = c.op === ConfigOp.APPEND ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
        if (next.length === 0) delete after[c.name];
        else after[c.name] = next.join(',');
        break;
      }
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `unknown config operation ${c.op}`);
    }
    if ((after[c.name]?.length ?? 0) > MAX_CONFIG_VALUE_LENGTH) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `config '${c.name}' would be longer than ${MAX_CONFIG_VALUE_LENGTH}`);
  }
  return after;
}

/** The config records that turn `before` into `after` (a removed override is a null value). */
export function configRecords(resourceType: number, resourceName: string, before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): MetadataRecord[] {
  const records: MetadataRecord[] = [];
  for (const [name, value] of Object.entries(after)) {
    if (before[name] !== value) records.push({ type: 'config', resourceType, resourceName, name, value });
  }
  for (const name of Object.keys(before)) {
    if (!(name in after)) records.push({ type: 'config', resourceType, resourceName, name, value: null });
  }
  return records;
}
