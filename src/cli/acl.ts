// `sluice acl add|list|remove` (main thread of the CLI process): ACLs through CreateAcls,
// DescribeAcls and DeleteAcls against a running broker, in kafka-acls.sh's terms. `add` creates
// one ACL per principal and operation on one resource; `list` and `remove` select by whatever is
// given (nothing: every ACL; `remove` needs at least a resource). Names in and out are Kafka's
// (TOPIC, PREFIXED, READ, ALLOW), in any case on the command line.
import {
  AclOperation, AclPermission, codeOf, CLUSTER_RESOURCE, operationName, PatternType, patternTypeName, permissionName,
  ResourceType, resourceTypeName,
} from '../coordinator/acl/acl.js';
import type { AclCreationWire, AclFilterWire } from '../protocol/apis/acls.js';
import type { KafkaAdmin } from '../client/admin.js';
import { UsageError, optionValue } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { table } from './io.js';
import type { CliIo } from './io.js';
import type { Render } from './output.js';

const SELECT: readonly OptionSpec[] = [
  { name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' },
  { name: 'allow-principal', repeatable: true }, { name: 'deny-principal', repeatable: true }, { name: 'operation', repeatable: true },
  { name: 'topic' }, { name: 'group' }, { name: 'cluster', switch: true }, { name: 'transactional-id' },
  { name: 'resource-pattern-type' }, { name: 'host' },
];

export const ACL_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = { add: SELECT, list: SELECT, remove: SELECT };

/** The resource the options name, or null for none. */
function resourceOf(parsed: ParsedArgs): { readonly type: ResourceType; readonly name: string } | null {
  const named = [
    ['topic', ResourceType.TOPIC], ['group', ResourceType.GROUP], ['transactional-id', ResourceType.TRANSACTIONAL_ID],
  ].flatMap(([opt, type]) => {
    const v = optionValue(parsed, opt as string);
    return v === undefined ? [] : [{ type: type as ResourceType, name: v }];
  });
  if (parsed.options.has('cluster')) named.push({ type: ResourceType.CLUSTER, name: CLUSTER_RESOURCE });
  if (named.length > 1) throw new UsageError('name one resource: --topic, --group, --transactional-id or --cluster');
  return named[0] ?? null;
}

function patternOf(parsed: ParsedArgs, fallback: PatternType, allowed: readonly PatternType[]): PatternType {
  const raw = optionValue(parsed, 'resource-pattern-type');
  if (raw === undefined) return fallback;
  const code = codeOf(PatternType, raw);
  if (code === undefined || !allowed.includes(code)) throw new UsageError(`--resource-pattern-type must be one of ${allowed.map(patternTypeName).join(', ').toLowerCase()}`);
  return code;
}

function operationsOf(parsed: ParsedArgs): AclOperation[] {
  return (parsed.options.get('operation') ?? []).map((raw) => {
    const code = codeOf(AclOperation, raw);
    if (code === undefined || code === AclOperation.UNKNOWN || code === AclOperation.ANY) throw new UsageError(`unknown --operation "${raw}"`);
    return code;
  });
}

/** Each principal with its permission, as --allow-principal and --deny-principal give them. */
function principalsOf(parsed: ParsedArgs): { readonly principal: string; readonly permission: AclPermission }[] {
  const list = (opt: string, permission: AclPermission): { principal: string; permission: AclPermission }[] => (parsed.options.get(opt) ?? []).map((principal) => {
    if (!/^[^:]+:.+$/.test(principal)) throw new UsageError(`--${opt} must be TYPE:NAME, e.g. User:alice, got "${principal}"`);
    return { principal, permission };
  });
  return [...list('allow-principal', AclPermission.ALLOW), ...list('deny-principal', AclPermission.DENY)];
}

/** The filters `list` and `remove` send: one per (principal, operation) given, ANY for what is not. */
function filtersOf(parsed: ParsedArgs, fallbackPattern: PatternType): AclFilterWire[] {
  const resource = resourceOf(parsed);
  const patternTypeFilter = patternOf(parsed, fallbackPattern, [PatternType.ANY, PatternType.MATCH, PatternType.LITERAL, PatternType.PREFIXED]);
  const principals = principalsOf(parsed);
  const operations = operationsOf(parsed);
  const base = {
    resourceTypeFilter: resource?.type ?? ResourceType.ANY, resourceNameFilter: resource?.name ?? null, patternTypeFilter,
    hostFilter: optionValue(parsed, 'host') ?? null,
  };
  const who = principals.length === 0 ? [{ principal: null, permission: AclPermission.ANY }] : principals;
  const ops = operations.length === 0 ? [AclOperation.ANY] : operations;
  return who.flatMap((p) => ops.map((operation) => ({ ...base, principalFilter: p.principal, permissionType: p.permission, operation })));
}

interface AclRow {
  readonly resourceType: string;
  readonly resourceName: string;
  readonly patternType: string;
  readonly principal: string;
  readonly host: string;
  readonly operation: string;
  readonly permission: string;
}

function render(rows: readonly AclRow[], out: Render, empty: string): string {
  const text = rows.length === 0
    ? empty
    : table([
      ['RESOURCE-TYPE', 'NAME', 'PATTERN', 'PRINCIPAL', 'HOST', 'OPERATION', 'PERMISSION'],
      ...rows.map((r) => [r.resourceType, r.resourceName, r.patternType, r.principal, r.host, r.operation, r.permission]),
    ]);
  return out(rows, text);
}

function row(r: { resourceType: number; resourceName: string; patternType: number; principal: string; host: string; operation: number; permissionType: number }): AclRow {
  return {
    resourceType: resourceTypeName(r.resourceType), resourceName: r.resourceName, patternType: patternTypeName(r.patternType),
    principal: r.principal, host: r.host, operation: operationName(r.operation), permission: permissionName(r.permissionType),
  };
}

function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  if (parsed.positionals.length > 0) throw new UsageError(`acl ${verb} takes options only`);
  switch (verb) {
    case 'add': {
      const resource = resourceOf(parsed);
      if (resource === null) throw new UsageError('acl add needs a resource: --topic, --group, --transactional-id or --cluster');
      const principals = principalsOf(parsed);
      if (principals.length === 0) throw new UsageError('acl add needs --allow-principal or --deny-principal');
      const operations = operationsOf(parsed);
      if (operations.length === 0) throw new UsageError('acl add needs --operation');
      const resourcePatternType = patternOf(parsed, PatternType.LITERAL, [PatternType.LITERAL, PatternType.PREFIXED]);
      const host = optionValue(parsed, 'host') ?? '*';
      const creations: AclCreationWire[] = principals.flatMap((p) => operations.map((operation) => ({
        resourceType: resource.type, resourceName: resource.name, resourcePatternType, principal: p.principal, host, operation, permissionType: p.permission,
      })));
      return async (admin: KafkaAdmin) => {
        await admin.createAcls(creations);
        return render(creations.map((c) => row({ ...c, patternType: c.resourcePatternType })), out, '');
      };
    }
    case 'list': {
      const filters = filtersOf(parsed, PatternType.ANY);
      return async (admin: KafkaAdmin) => {
        const rows = new Map<string, AclRow>();
        for (const f of filters) {
          for (const r of await admin.describeAcls(f)) {
            for (const a of r.acls) {
              const one = row({ ...r, ...a });
              rows.set(JSON.stringify(one), one);
            }
          }
        }
        return render([...rows.values()], out, '(no ACLs)');
      };
    }
    case 'remove': {
      if (resourceOf(parsed) === null) throw new UsageError('acl remove needs a resource: --topic, --group, --transactional-id or --cluster');
      const filters = filtersOf(parsed, PatternType.LITERAL);
      return async (admin: KafkaAdmin) => render((await admin.deleteAcls(filters)).map(row), out, '(no ACL matched)');
    }
    default:
      throw new UsageError(`unknown acl command "${verb}"`);
  }
}

export async function runAcl(verb: string, argv: readonly string[], io: CliIo): Promise<void> {
  await runAdminVerb('acl', ACL_VERBS, plan, verb, argv, io);
}

const SELECT_HELP = `  --topic T | --group G | --transactional-id X | --cluster   the resource
  --resource-pattern-type literal|prefixed                   (list/remove also any|match)
  --allow-principal User:NAME, --deny-principal User:NAME     repeatable; User:* is everyone
  --operation OP                      repeatable: all, read, write, create, delete, alter, describe,
                                      cluster-action, describe-configs, alter-configs, idempotent-write
  --host H                            client address the ACL applies to [*]`;

export const ACL_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice acl add|list|remove [options]

Manages ACLs (Kafka's semantics: DENY beats ALLOW; super users may do anything). They live in
the cluster's metadata. Managing them needs ALTER on the cluster, listing DESCRIBE.

Commands:
  add       allow or deny principals operations on one resource
  list      list ACLs (all, or those the options select)
  remove    remove the ACLs the options select on one resource`,
  add: `Usage: sluice acl add --allow-principal|--deny-principal P --operation OP RESOURCE [options]

Options:
${SELECT_HELP}
${CLIENT_OPTIONS_HELP}`,
  list: `Usage: sluice acl list [RESOURCE] [options]

Options:
${SELECT_HELP}
${CLIENT_OPTIONS_HELP}`,
  remove: `Usage: sluice acl remove RESOURCE [--allow-principal|--deny-principal P] [--operation OP] [options]

Removes every ACL on the resource that matches the principals and operations given (all when none).

Options:
${SELECT_HELP}
${CLIENT_OPTIONS_HELP}`,
};
