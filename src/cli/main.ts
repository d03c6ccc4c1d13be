// The `sluice` command line (main thread of the CLI process): dispatches to start, config print,
// topic and group verbs, prints help, and maps failures to exit codes — 1 for operational failures
// (Kafka errors print their error name), 2 for bad usage or configuration.
// Runs itself when it is the process entry point; bin/sluice calls runCli.

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CONFIG_FLAGS, ConfigError, describeConfig, resolveConfig } from '../config.js';
import { ConnectionError } from '../client/connection.js';
import { KafkaError, errorName } from '../protocol/errors.js';
import { UsageError, formatOption, parseArgs } from './args.js';
import { processIo, table } from './io.js';
import type { CliIo } from './io.js';
import { runGroup } from './group.js';
import { runStart } from './start.js';
import { runTopic } from './topic.js';

const MAIN_HELP = `Usage: sluice <command> [options]

Commands:
  start                  run a broker node until SIGTERM/SIGINT
  config print           print the resolved configuration and where each value came from
  topic create NAME      create a topic
  topic list             list topics
  topic describe NAME    show a topic's partitions and configuration
  topic delete NAME      delete a topic
  group list             list consumer groups
  group describe GROUP   show a group's members, committed offsets and lag
  group seek GROUP       set an inactive group's committed offsets
  group delete GROUP...  delete inactive groups and their offsets

Run 'sluice <command> --help' for a command's options.`;

function configFlagsHelp(): string {
  const rows = CONFIG_FLAGS.map((f) => [`  --${f.flag} ${f.hint}`, `${f.help} [${String(f.defaultValue)}]`]);
  return table([['  --config FILE', 'JSON file of settings, e.g. {"data-dir": "/var/lib/sluice", "flush": "10"}'], ...rows]);
}

const CONFIG_SOURCES_HELP = `Each setting is taken from, in order: its flag, the environment variable SLUICE_<FLAG>
(e.g. SLUICE_DATA_DIR; SLUICE_CONFIG names the config file), the config file (keys are flag
names), then the default shown in brackets.`;

const startHelp = (): string => `Usage: sluice start [options]

Starts a broker node and prints one line when it is ready:
  sluice ready kafka=HOST:PORT admin=HOST:PORT data-dir=DIR shards=N flush=POLICY
SIGTERM/SIGINT stop it gracefully (exit 0; exit 1 after 10 s, or at once on a second signal).

${CONFIG_SOURCES_HELP}

Options:
${configFlagsHelp()}`;

const configPrintHelp = (): string => `Usage: sluice config print [--effective] [--format text|json] [options]

Prints the configuration 'sluice start' would use with the same flags and environment, with
the source of each value (flag, env, file, default). Without --effective only the values that
are set somewhere are printed.

${CONFIG_SOURCES_HELP}

Options:
  --effective            print every setting, defaults included
  --format text|json     output format [text]
${configFlagsHelp()}`;

const TOPIC_COMMON_HELP = `  --brokers HOST:PORT[,HOST:PORT...]  brokers to bootstrap from [the resolved kafka-addr]
  --format text|json                  output format [text]
  --timeout-ms N                      request timeout [30000]`;

const TOPIC_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice topic <create|list|describe|delete> ...

  topic create NAME [--partitions N] [--replication-factor N] [--config key=value ...]
  topic list
  topic describe NAME
  topic delete NAME

Options for all of them:
${TOPIC_COMMON_HELP}

On failure the Kafka error name is printed and the exit code is 1.`,
  create: `Usage: sluice topic create NAME [options]

Options:
  --partitions N                      partition count [the broker's num-partitions]
  --replication-factor N              replicas per partition [the broker's default-replication-factor]
  --config key=value                  topic config (repeatable), e.g. --config retention.ms=3600000
${TOPIC_COMMON_HELP}`,
  list: `Usage: sluice topic list [options]\n\nOptions:\n${TOPIC_COMMON_HELP}`,
  describe: `Usage: sluice topic describe NAME [options]\n\nOptions:\n${TOPIC_COMMON_HELP}`,
  delete: `Usage: sluice topic delete NAME [options]\n\nOptions:\n${TOPIC_COMMON_HELP}`,
};

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

const GROUP_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice group <list|describe|seek|delete> ...

  group list
  group describe GROUP
  group seek GROUP --topic T (--to-earliest | --to-latest | --to-offset N | --to-timestamp MS)
             [--partition P]
  group delete GROUP...

Options for all of them:
${TOPIC_COMMON_HELP}

${GROUP_JSON_HELP}

On failure the Kafka error name is printed and the exit code is 1 (e.g. NON_EMPTY_GROUP when
deleting a group that has members, UNKNOWN_MEMBER_ID when seeking one).`,
  list: `Usage: sluice group list [options]

Lists groups with their state, type, protocol type and member count.

Options:
${TOPIC_COMMON_HELP}

${GROUP_JSON_SEE}`,
  describe: `Usage: sluice group describe GROUP [options]

Shows the group's state, protocol and members (with their assigned partitions), and per
partition the committed offset, log end offset, lag in records, lag in seconds (between the
record at the committed offset and the last record) and the owning member.

Options:
${TOPIC_COMMON_HELP}

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
${TOPIC_COMMON_HELP}

${GROUP_JSON_SEE}`,
  delete: `Usage: sluice group delete GROUP... [options]

Deletes groups that have no members, with their committed offsets.

Options:
${TOPIC_COMMON_HELP}

${GROUP_JSON_SEE}`,
};

function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

function runConfigPrint(argv: readonly string[], io: CliIo): void {
  const parsed = parseArgs(argv, [{ name: 'effective', switch: true }, { name: 'format' }], true);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
  const format = formatOption(parsed);
  const { config, sources } = resolveConfig(parsed.configArgv, io.env);
  const effective = parsed.options.has('effective');
  io.out(describeConfig(config, sources, format, (e) => effective || e.source !== 'default'));
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.out(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === 'start') {
    if (wantsHelp(argv.slice(1))) return help(io, startHelp());
    const parsed = parseArgs(argv.slice(1), [], true);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
    return runStart(parsed.configArgv, io);
  }
  if (command === 'config') {
    if (sub === undefined || sub === '--help' || sub === '-h') return help(io, configPrintHelp());
    if (sub !== 'print') throw new UsageError(`unknown config command "${sub}"`);
    if (wantsHelp(rest)) return help(io, configPrintHelp());
    runConfigPrint(rest, io);
    return 0;
  }
  if (command === 'topic') {
    if (sub === undefined || sub === '--help' || sub === '-h') return help(io, TOPIC_HELP[''] ?? '');
    if (wantsHelp(rest)) return help(io, TOPIC_HELP[sub] ?? TOPIC_HELP[''] ?? '');
    await runTopic(sub, rest, io);
    return 0;
  }
  if (command === 'group') {
    if (sub === undefined || sub === '--help' || sub === '-h') return help(io, GROUP_HELP[''] ?? '');
    if (wantsHelp(rest)) return help(io, GROUP_HELP[sub] ?? GROUP_HELP[''] ?? '');
    await runGroup(sub, rest, io);
    return 0;
  }
  throw new UsageError(`unknown command "${command}"`);
}

function help(io: CliIo, text: string): number {
  io.out(text);
  return 0;
}

/** Runs one CLI invocation and returns its exit code (`start` returns only if startup fails). */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`sluice: ${err.message}\nRun 'sluice --help' for usage.`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`sluice: ${err.message}`);
      return 2;
    }
    if (err instanceof KafkaError) {
      const name = errorName(err.code);
      io.err(`sluice: ${err.message.startsWith(name) ? err.message : `${name}: ${err.message}`}`);
      return 1;
    }
    if (err instanceof ConnectionError) {
      io.err(`sluice: ${err.message}`);
      return 1;
    }
    io.err(`sluice: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
