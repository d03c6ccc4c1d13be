// `sluice user create|delete|list` (main thread of the CLI process): SCRAM credentials, through
// AlterUserScramCredentials/DescribeUserScramCredentials against a running broker (--brokers), or
// for `create --data-dir DIR` written offline into DIR's bootstrap file, which the node carries
// into its metadata log when it starts (the first credential needs no running broker). The
// password is read from --password-file (its first line), never from the command line, and is
// salted and iterated before it leaves this process.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KafkaAdmin, ScramMechanismName } from '../client/admin.js';
import { isScramMechanism, SCRAM_MAX_ITERATIONS, SCRAM_MECHANISMS, SCRAM_MIN_ITERATIONS, scramCredential } from '../common/sasl_mechanisms.js';
import { writeScramBootstrap } from '../server/scram_bootstrap.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { table } from './io.js';
import type { CliIo } from './io.js';
import { renderOption } from './output.js';
import type { Render } from './output.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];
const CREDENTIAL: readonly OptionSpec[] = [{ name: 'mechanism' }, { name: 'password-file' }, { name: 'iterations' }];

export const USER_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  create: [...COMMON, ...CREDENTIAL, { name: 'data-dir' }],
  delete: [...COMMON, { name: 'mechanism' }],
  list: COMMON,
};

function oneName(parsed: ParsedArgs, verb: string): string {
  const [name, ...rest] = parsed.positionals;
  if (name === undefined || rest.length > 0) throw new UsageError(`user ${verb} takes exactly one user name`);
  return name;
}

function mechanismOf(parsed: ParsedArgs): ScramMechanismName {
  const m = optionValue(parsed, 'mechanism')?.toUpperCase();
  if (m === undefined || !isScramMechanism(m)) throw new UsageError(`--mechanism must be one of ${SCRAM_MECHANISMS.join(', ')}`);
  return m;
}

/** The password: the file's first line, without its line end. */
function passwordOf(parsed: ParsedArgs): string {
  const file = optionValue(parsed, 'password-file');
  if (file === undefined) throw new UsageError('--password-file is required (the password never goes on the command line)');
  const password = readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UsageError(`${file}: the password (its first line) is empty`);
  return password;
}

function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  switch (verb) {
    case 'create': {
      const name = oneName(parsed, verb);
      const mechanism = mechanismOf(parsed);
      const password = passwordOf(parsed);
      const iterations = intOption(parsed, 'iterations', SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS) ?? SCRAM_MIN_ITERATIONS;
      return async (admin: KafkaAdmin) => {
        await admin.upsertScramCredential(name, mechanism, password, iterations);
        return out({ user: name, mechanism, iterations }, `set the ${mechanism} credential of ${name}`);
      };
    }
    case 'delete': {
      const name = oneName(parsed, verb);
      const mechanism = mechanismOf(parsed);
      return async (admin: KafkaAdmin) => {
        await admin.deleteScramCredential(name, mechanism);
        return out({ user: name, mechanism }, `deleted the ${mechanism} credential of ${name}`);
      };
    }
    case 'list': {
      if (parsed.positionals.length > 0) throw new UsageError('user list takes no arguments');
      return async (admin: KafkaAdmin) => {
        const users = await admin.describeScramCredentials();
        const text = users.length === 0
          ? '(no SCRAM users)'
          : table([['USER', 'MECHANISM', 'ITERATIONS'], ...users.flatMap((u) => u.credentials.map((c) => [u.user, c.mechanism, String(c.iterations)]))]);
        return out(users, text);
      };
    }
    default:
      throw new UsageError(`unknown user command "${verb}"`);
  }
}

/** `create --data-dir`: the credential goes into the data dir's bootstrap file, no broker involved. */
function createOffline(argv: readonly string[], io: CliIo): boolean {
  const parsed = parseArgs(argv, USER_VERBS['create']!, false);
  const dataDir = optionValue(parsed, 'data-dir');
  if (dataDir === undefined) return false;
  if (parsed.options.has('brokers')) throw new UsageError('--data-dir writes offline: --brokers does not go with it');
  const name = oneName(parsed, 'create');
  const mechanism = mechanismOf(parsed);
  const iterations = intOption(parsed, 'iterations', SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS) ?? SCRAM_MIN_ITERATIONS;
  const credential = scramCredential(mechanism, passwordOf(parsed), randomBytes(24), iterations);
  writeScramBootstrap(dataDir, { user: name, ...credential });
  io.out(renderOption(parsed)({ user: name, mechanism, iterations, dataDir }, `wrote the ${mechanism} credential of ${name} into ${dataDir}; the broker carries it into its metadata when it starts`));
  return true;
}

export async function runUser(verb: string, argv: readonly string[], io: CliIo): Promise<void> {
  if (verb === 'create' && createOffline(argv, io)) return;
  await runAdminVerb('user', USER_VERBS, plan, verb, argv, io);
}

export const USER_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice user create|delete|list [options]

Manages SCRAM credentials (SCRAM-SHA-256, SCRAM-SHA-512) of SASL listeners. They live in the
cluster's metadata, salted and iterated; the password never leaves this process.

Commands:
  create NAME --mechanism M --password-file F   set a user's credential (--data-dir: offline)
  delete NAME --mechanism M                     delete a user's credential
  list                                          list users and their mechanisms`,
  create: `Usage: sluice user create NAME --mechanism SCRAM-SHA-256|SCRAM-SHA-512 --password-file F [options]

Sets NAME's credential for the mechanism (AlterUserScramCredentials), replacing an existing one.
With --data-dir DIR it is written offline into DIR (no broker needed; stop the node first), and
the node carries it into the metadata when it starts; on a cluster, write it into every
controller voter's data dir (the active controller's copy is used).

Options:
  --mechanism M                       SCRAM-SHA-256 or SCRAM-SHA-512
  --password-file F                   file whose first line is the password
  --iterations N                      PBKDF2 iterations, ${SCRAM_MIN_ITERATIONS}-${SCRAM_MAX_ITERATIONS} [${SCRAM_MIN_ITERATIONS}]
  --data-dir DIR                      write offline into a node's data dir instead
${CLIENT_OPTIONS_HELP}`,
  delete: `Usage: sluice user delete NAME --mechanism M [options]\n\nOptions:\n  --mechanism M                       SCRAM-SHA-256 or SCRAM-SHA-512\n${CLIENT_OPTIONS_HELP}`,
  list: `Usage: sluice user list [options]\n\nLists users with SCRAM credentials, each mechanism and its iterations.\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
};
