// `sluice quota alter|describe` (main thread of the CLI process): client quotas through
// AlterClientQuotas/DescribeClientQuotas against a running broker (--brokers). An entity is named
// by --user NAME and/or --client-id NAME, or --ip ADDRESS, or by `--default user|client-id|ip` for
// the <default> of that part, as Kafka's kafka-configs does with --entity-default.
import { describeEntity, type KafkaAdmin } from '../client/admin.js';
import { QuotaMatch, type QuotaEntityPart } from '../protocol/apis/client_quotas.js';
import { UsageError, optionValue } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { table } from './io.js';
import type { Render } from './output.js';
import type { CliIo } from './io.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];
const ENTITY: readonly OptionSpec[] = [{ name: 'user' }, { name: 'client-id' }, { name: 'ip' }, { name: 'default', repeatable: true }];

export const QUOTA_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  alter: [...COMMON, ...ENTITY, { name: 'add', repeatable: true }, { name: 'delete', repeatable: true }, { name: 'validate-only', switch: true }],
  describe: [...COMMON, ...ENTITY],
};

const ENTITY_TYPES = ['user', 'client-id', 'ip'] as const;

/** The entity parts the options name (user first), each a name or null for --default. */
function entityOf(parsed: ParsedArgs): QuotaEntityPart[] {
  const defaults = (parsed.options.get('default') ?? []).flatMap((d) => d.split(','));
  for (const d of defaults) if (!(ENTITY_TYPES as readonly string[]).includes(d)) throw new UsageError(`--default takes user, client-id or ip, not "${d}"`);
  const parts: QuotaEntityPart[] = [];
  for (const type of ENTITY_TYPES) {
    const name = optionValue(parsed, type);
    if (name !== undefined && defaults.includes(type)) throw new UsageError(`--${type} and --default ${type} do not go together`);
    if (name !== undefined) parts.push({ entityType: type, entityName: name });
    else if (defaults.includes(type)) parts.push({ entityType: type, entityName: null });
  }
  return parts;
}

/** `--add k=v[,k=v]` values. */
function additions(parsed: ParsedArgs): Array<{ key: string; value: number; remove: boolean }> {
  return (parsed.options.get('add') ?? []).flatMap((a) => a.split(',')).map((kv) => {
    const eq = kv.indexOf('=');
    const value = Number(kv.slice(eq + 1));
    if (eq <= 0 || kv.slice(eq + 1) === '' || !Number.isFinite(value)) throw new UsageError(`--add takes KEY=NUMBER, not "${kv}"`);
    return { key: kv.slice(0, eq), value, remove: false };
  });
}

function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  if (parsed.positionals.length > 0) throw new UsageError(`quota ${verb} takes no positional arguments`);
  const entity = entityOf(parsed);
  switch (verb) {
    case 'alter': {
      if (entity.length === 0) throw new UsageError('name the entity: --user NAME, --client-id NAME, --ip ADDRESS or --default user|client-id|ip');
      const deletions = (parsed.options.get('delete') ?? []).flatMap((d) => d.split(',')).map((key) => ({ key, value: 0, remove: true }));
      const ops = [...additions(parsed), ...deletions];
      if (ops.length === 0) throw new UsageError('nothing to alter: give --add KEY=VALUE and/or --delete KEY');
      const validateOnly = parsed.options.has('validate-only');
      return async (admin: KafkaAdmin) => {
        await admin.alterClientQuotas([{ entity, ops }], validateOnly);
        const what = ops.map((o) => (o.remove ? `-${o.key}` : `${o.key}=${o.value}`)).join(', ');
        return out({ entity: Object.fromEntries(entity.map((p) => [p.entityType, p.entityName])), ops, validateOnly }, `${validateOnly ? 'valid' : 'altered'}: ${describeEntity(entity)} ${what}`);
      };
    }
    case 'describe': {
      const components = entity.map((p) => ({ entityType: p.entityType, matchType: p.entityName === null ? QuotaMatch.DEFAULT : QuotaMatch.EXACT, match: p.entityName }));
      return async (admin: KafkaAdmin) => {
        const entries = await admin.describeClientQuotas(components, false);
        const rows = entries.map((e) => ({ entity: describeEntity(e.entity), values: Object.fromEntries(e.values.map((v) => [v.key, v.value])) }));
        rows.sort((a, b) => (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0));
        const text = rows.length === 0
          ? '(no client quotas)'
          : table([['ENTITY', 'QUOTA', 'VALUE'], ...rows.flatMap((r) => Object.entries(r.values).map(([k, v]) => [r.entity, k, String(v)]))]);
        return out(rows, text);
      };
    }
    default:
      throw new UsageError(`unknown quota command "${verb}"`);
  }
}

export async function runQuota(verb: string, argv: readonly string[], io: CliIo): Promise<void> {
  await runAdminVerb('quota', QUOTA_VERBS, plan, verb, argv, io);
}

const ENTITY_HELP = `  --user NAME                         the user (SASL principal name; ANONYMOUS without SASL)
  --client-id NAME                    the client id
  --default user|client-id            the <default> of that part instead of a name`;

export const QUOTA_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice quota alter|describe [options]

Manages client quotas (producer_byte_rate, consumer_byte_rate, request_percentage) per user,
client id or both, with <default> entries, as Kafka's kafka-configs does. They live in the
cluster's metadata; a client over its quota is throttled (KIP-219).

Commands:
  alter      set (--add KEY=VALUE) or remove (--delete KEY) an entity's quotas
  describe   list quota entities and their values`,
  alter: `Usage: sluice quota alter ENTITY [--add KEY=VALUE,...] [--delete KEY,...] [options]

Options:
${ENTITY_HELP}
  --add KEY=VALUE[,KEY=VALUE]         producer_byte_rate, consumer_byte_rate (bytes/s), request_percentage
  --delete KEY[,KEY]                  remove these quotas of the entity
  --validate-only                     check, change nothing
${CLIENT_OPTIONS_HELP}`,
  describe: `Usage: sluice quota describe [ENTITY] [options]

Lists the quota entities matching the entity options (none: all of them) with their values.

Options:
${ENTITY_HELP}
${CLIENT_OPTIONS_HELP}`,
};
