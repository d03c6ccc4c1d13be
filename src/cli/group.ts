// `sluice group list|describe|seek|delete` (main thread of the CLI process): parses the verb's
// arguments, runs it through the admin client against --brokers (default: the resolved
// kafka-addr) and prints aligned text tables or JSON (shapes documented in main's help).
// Failures propagate to main, which maps them to exit codes. Usage errors are raised before any
// network traffic.

import { KafkaAdmin } from '../client/admin.js';
import type {
  GroupDescription, GroupMember, GroupSummary, ListedOffset, PartitionLag, TopicPartitions,
} from '../client/group_admin.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { UsageError, intOption, optionValue } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { table } from './io.js';
import type { CliIo } from './io.js';
import type { Render } from './output.js';
import { WATCH_HELP, WATCH_OPTION } from './watch.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];

export const GROUP_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  list: COMMON,
  describe: [...COMMON, WATCH_OPTION],
  seek: [
    ...COMMON, { name: 'topic' }, { name: 'partition' },
    { name: 'to-earliest', switch: true }, { name: 'to-latest', switch: true }, { name: 'to-offset' }, { name: 'to-timestamp' },
  ],
  delete: COMMON,
};


/** Bootstrap addresses: --brokers a:1,b:2, else the kafka-addr that `sluice start` would use. */

// ---- seek targets -----------------------------------------------------------------------------

export type SeekTarget =
  | { kind: 'earliest' }
  | { kind: 'latest' }
  | { kind: 'offset'; offset: number }
  | { kind: 'timestamp'; timestamp: number };

/** Exactly one of --to-earliest, --to-latest, --to-offset N, --to-timestamp MS. */
export function seekTarget(parsed: ParsedArgs): SeekTarget {
  const given = ['to-earliest', 'to-latest', 'to-offset', 'to-timestamp'].filter((n) => parsed.options.has(n));
  if (given.length !== 1) {
    throw new UsageError('group seek needs exactly one of --to-earliest, --to-latest, --to-offset N, --to-timestamp MS');
  }
  if (parsed.options.has('to-earliest')) return { kind: 'earliest' };
  if (parsed.options.has('to-latest')) return { kind: 'latest' };
  const offset = intOption(parsed, 'to-offset', 0, Number.MAX_SAFE_INTEGER);
  if (offset !== undefined) return { kind: 'offset', offset };
  return { kind: 'timestamp', timestamp: intOption(parsed, 'to-timestamp', 0, Number.MAX_SAFE_INTEGER) as number };
}

export interface PartitionBounds {
  earliest: number;
  latest: number;
  /** For a timestamp target: the first offset at or after it, -1 when no record is that recent. */
  atTimestamp: number;
}

/**
 * The offset a seek commits: an explicit offset is clamped into [earliest, latest] (as Kafka's
 * tool does), and a timestamp later than every record means the log end.
 */
export function seekOffset(target: SeekTarget, b: PartitionBounds): number {
  switch (target.kind) {
    case 'earliest':
      return b.earliest;
    case 'latest':
      return b.latest;
    case 'offset':
      return Math.min(Math.max(target.offset, b.earliest), b.latest);
    case 'timestamp':
      return b.atTimestamp < 0 ? b.latest : b.atTimestamp;
  }
}

export interface SeekChange {
  partition: number;
  /** null when the group had no committed offset there. */
  oldOffset: number | null;
  newOffset: number;
}

export interface SeekResult {
  groupId: string;
  topic: string;
  partitions: SeekChange[];
}

async function runSeek(admin: KafkaAdmin, groupId: string, topic: string, partition: number | undefined, target: SeekTarget): Promise<SeekResult> {
  const ids = partition === undefined ? (await admin.describeTopic(topic)).partitionDetails.map((p) => p.partition) : [partition];
  const partitions = ids.map((p) => ({ topic, partition: p }));
  const noTimestamp: ListedOffset[] = partitions.map((p) => ({ ...p, offset: -1, timestamp: -1 }));
  const [earliest, latest, atTimestamp, committed] = await Promise.all([
    admin.listOffsets(partitions, 'earliest'),
    admin.listOffsets(partitions, 'latest'),
    target.kind === 'timestamp' ? admin.listOffsets(partitions, { timestamp: target.timestamp }) : noTimestamp,
    admin.fetchGroupOffsets(groupId),
  ]);
  const changes = partitions.map((p, i): SeekChange => ({
    partition: p.partition,
    oldOffset: committed.find((c) => c.topic === topic && c.partition === p.partition)?.offset ?? null,
    newOffset: seekOffset(target, {
      earliest: (earliest[i] as ListedOffset).offset,
      latest: (latest[i] as ListedOffset).offset,
      atTimestamp: (atTimestamp[i] as ListedOffset).offset,
    }),
  }));
  await admin.commitGroupOffsets(groupId, changes.map((c) => ({ topic, partition: c.partition, offset: c.newOffset })));
  return { groupId, topic, partitions: changes };
}

// ---- describe ---------------------------------------------------------------------------------

export interface GroupListEntry extends GroupSummary {
  /** null when the group could not be described (it vanished between list and describe). */
  members: number | null;
}

export interface GroupReport extends GroupDescription {
  partitions: PartitionLag[];
}

async function runList(admin: KafkaAdmin): Promise<GroupListEntry[]> {
  const groups = await admin.listGroups();
  const described = await admin.describeGroups(groups.map((g) => g.groupId));
  return groups.map((g, i) => {
    const d = described[i] as GroupDescription;
    return { ...g, members: d.state === 'Dead' ? null : d.members.length };
  });
}

async function runDescribe(admin: KafkaAdmin, groupId: string): Promise<GroupReport> {
  const [group] = await admin.describeGroups([groupId]);
  if (group === undefined || group.state === 'Dead') {
    throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `GROUP_ID_NOT_FOUND: group ${groupId} does not exist`);
  }
  return { ...group, partitions: await admin.groupLag(group) };
}

// ---- text output ------------------------------------------------------------------------------

const dash = (v: number | string | null): string => (v === null || v === '' ? '-' : String(v));

export function assignmentText(a: readonly TopicPartitions[] | null): string {
  if (a === null) return '-';
  if (a.length === 0) return '(none)';
  return a.map((t) => `${t.topic}:[${t.partitions.join(',')}]`).join(' ');
}

export function listText(groups: readonly GroupListEntry[]): string {
  if (groups.length === 0) return '(no groups)';
  return table([
    ['GROUP', 'STATE', 'TYPE', 'PROTOCOL-TYPE', 'MEMBERS'],
    ...groups.map((g) => [g.groupId, dash(g.state), g.groupType, dash(g.protocolType), dash(g.members)]),
  ]);
}

function membersText(members: readonly GroupMember[]): string {
  if (members.length === 0) return '(no members)';
  return table([
    ['MEMBER', 'INSTANCE', 'CLIENT-ID', 'HOST', 'ASSIGNMENT'],
    ...members.map((m) => [m.memberId, dash(m.groupInstanceId), m.clientId, m.clientHost, assignmentText(m.assignment)]),
  ]);
}

export function describeText(g: GroupReport): string {
  const summary = table([
    ['group', g.groupId], ['state', g.state], ['type', g.groupType], ['protocol type', dash(g.protocolType)],
    ['protocol', dash(g.protocol)], ['members', String(g.members.length)],
  ]);
  const partitions = g.partitions.length === 0
    ? '(no committed offsets or assigned partitions)'
    : table([
      ['TOPIC', 'PARTITION', 'COMMITTED', 'LOG-END', 'LAG', 'LAG-SECONDS', 'MEMBER'],
      ...g.partitions.map((p) => [
        p.topic, String(p.partition), dash(p.committedOffset), dash(p.logEndOffset), dash(p.lag), dash(p.lagSeconds), dash(p.memberId),
      ]),
    ]);
  return `${summary}\n\n${membersText(g.members)}\n\n${partitions}`;
}

export function seekText(r: SeekResult): string {
  return table([
    ['TOPIC', 'PARTITION', 'OLD', 'NEW'],
    ...r.partitions.map((c) => [r.topic, String(c.partition), dash(c.oldOffset), String(c.newOffset)]),
  ]);
}

// ---- dispatch ---------------------------------------------------------------------------------

function oneGroup(parsed: ParsedArgs, verb: string): string {
  const [name, ...rest] = parsed.positionals;
  if (name === undefined || name === '' || rest.length > 0) throw new UsageError(`group ${verb} takes exactly one group id`);
  return name;
}

/** Checks the verb's arguments and returns what to do once connected. */
function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  switch (verb) {
    case 'list': {
      if (parsed.positionals.length > 0) throw new UsageError('group list takes no arguments');
      return async (admin) => {
        const groups = await runList(admin);
        return out(groups, listText(groups));
      };
    }
    case 'describe': {
      const groupId = oneGroup(parsed, verb);
      return async (admin) => {
        const report = await runDescribe(admin, groupId);
        return out(report, describeText(report));
      };
    }
    case 'seek': {
      const groupId = oneGroup(parsed, verb);
      const topic = optionValue(parsed, 'topic');
      if (topic === undefined || topic === '') throw new UsageError('group seek needs --topic T');
      const partition = intOption(parsed, 'partition', 0, MAX_INT32);
      const target = seekTarget(parsed);
      return async (admin) => {
        const result = await runSeek(admin, groupId, topic, partition, target);
        return out(result, seekText(result));
      };
    }
    default: {
      const ids = [...new Set(parsed.positionals)];
      if (ids.length === 0 || ids.includes('')) throw new UsageError('group delete takes one or more group ids');
      return async (admin) => {
        await admin.deleteGroups(ids);
        return out({ deleted: ids }, ids.map((id) => `deleted group ${id}`).join('\n'));
      };
    }
  }
}

/** Runs `group <verb> ...`; `argv` starts after the verb. */
export function runGroup(verb: string, argv: readonly string[], io: CliIo): Promise<number> {
  return runAdminVerb('group', GROUP_VERBS, plan, verb, argv, io);
}

const GROUP_JSON_HELP = `JSON output (--format json):
  list      [{"groupId", "state", "protocolType", "groupType": "classic"|"consumer",
              "members": N|null}]
  describe  {"groupId", "state", "protocolType", "protocol", "groupType",
             "members": [{"memberId", "groupInstanceId", "clientId", "clientHost",
                          "assignment": [{"topic", "partitions": [N...]}] | null}],
             "partitions": [{"topic", "partition", "committedOffset", "logEndOffset", "lag",
                             "lagSeconds", "memberId"}]}
  seek      {"groupId", "topic", "partitions": [{"partition", "oldOffset", "newOffset"}]}
  delete    {"deleted": [GROUP...]}
null means unknown or none: no committed offset, no owning member, an assignment that is not
the "consumer" protocol's. lag = logEndOffset - committedOffset; lagSeconds = time between the
record at the committed offset and the last record (0 when caught up).`;

const GROUP_JSON_SEE = "The JSON output (--format json) is described in 'sluice group --help'.";

export const GROUP_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice group <list|describe|seek|delete> ...

  group list
  group describe GROUP
  group seek GROUP --topic T (--to-earliest | --to-latest | --to-offset N | --to-timestamp MS)
             [--partition P]
  group delete GROUP...

Options for all of them:
${CLIENT_OPTIONS_HELP}

${GROUP_JSON_HELP}

On failure the Kafka error name is printed and the exit code is 1 (e.g. NON_EMPTY_GROUP when
deleting a group that has members, UNKNOWN_MEMBER_ID when seeking one).`,
  list: `Usage: sluice group list [options]

Lists groups with their state, type, protocol type and member count.

Options:
${CLIENT_OPTIONS_HELP}

${GROUP_JSON_SEE}`,
  describe: `Usage: sluice group describe GROUP [options]

Shows the group's state, protocol and members (with their assigned partitions), and per
partition the committed offset, log end offset, lag in records, lag in seconds (between the
record at the committed offset and the last record) and the owning member.

Options:
${WATCH_HELP}
${CLIENT_OPTIONS_HELP}

${GROUP_JSON_SEE}`,
  seek: `Usage: sluice group seek GROUP --topic T TARGET [options]

Sets the group's committed offsets on a topic and prints old and new offset per partition.
Only while the group has no members (stop its consumers first): otherwise UNKNOWN_MEMBER_ID.

Targets (exactly one):
  --to-earliest                       the log start offset
  --to-latest                         the log end offset
  --to-offset N                       offset N, clamped to [log start, log end]
  --to-timestamp MS                   the first record at or after MS (ms since the epoch);
                                      the log end if none is that recent

Options:
  --topic T                           topic to seek (required)
  --partition P                       only this partition [all of the topic's]
${CLIENT_OPTIONS_HELP}

${GROUP_JSON_SEE}`,
  delete: `Usage: sluice group delete GROUP... [options]

Deletes groups that have no members, with their committed offsets.

Options:
${CLIENT_OPTIONS_HELP}

${GROUP_JSON_SEE}`,
};
