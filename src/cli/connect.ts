// How a CLI command reaches the broker: the --brokers list (or the configured Kafka address)
// tried in order until one admin connection opens, and the shape every admin verb shares.
// Main thread of the CLI process.
import { readFileSync } from 'node:fs';
import { KafkaAdmin } from '../client/admin.js';
import { ConnectionError } from '../client/connection.js';
import { resolveConfig, splitHostPort } from '../config.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { renderOption } from './output.js';
import { watchInterval, watchUntilInterrupted } from './watch.js';
import type { Render } from './output.js';

export const MAX_INT32 = 2 ** 31 - 1;

export function brokerList(parsed: ParsedArgs, env: NodeJS.ProcessEnv): { host: string; port: number }[] {
  const raw = optionValue(parsed, 'brokers') ?? resolveConfig([], env).config.kafkaAddr;
  return raw.split(',').map((addr) => {
    try {
      return splitHostPort(addr.trim());
    } catch (err) {
      throw new UsageError(`--brokers: ${(err as Error).message}`);
    }
  });
}

/** The bootstrap addresses as our producer and consumer take them (checked as brokerList does). */
export function bootstrapServers(parsed: ParsedArgs, env: NodeJS.ProcessEnv): string[] {
  return brokerList(parsed, env).map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`));
}

/** The admin HTTP's Authorization header from --admin-token-file (or SLUICE_ADMIN_TOKEN_FILE); undefined when neither is set. */
export function adminAuthorization(parsed: ParsedArgs, env: NodeJS.ProcessEnv): string | undefined {
  const file = optionValue(parsed, 'admin-token-file') ?? env['SLUICE_ADMIN_TOKEN_FILE'];
  if (file === undefined || file === '') return undefined;
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new UsageError(`--admin-token-file: ${(err as Error).message}`);
  }
  if (token === '') throw new UsageError(`--admin-token-file: ${file} holds no token`);
  return `Bearer ${token}`;
}

/** The --timeout-ms option, or 30 s. */
export function timeoutOption(parsed: ParsedArgs): number {
  return intOption(parsed, 'timeout-ms', 1, MAX_INT32) ?? 30_000;
}

/** An admin connection to the first of the brokers that answers; requests time out after `timeoutMs` (default --timeout-ms). */
export async function connectAdmin(parsed: ParsedArgs, env: NodeJS.ProcessEnv, timeoutMs = timeoutOption(parsed)): Promise<KafkaAdmin> {
  let last: unknown = new ConnectionError('no brokers given');
  for (const { host, port } of brokerList(parsed, env)) {
    try {
      return await KafkaAdmin.connect({
        host, port, clientId: 'sluice-cli', requestTimeoutMs: timeoutMs, operationTimeoutMs: timeoutMs,
      });
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

/** What a verb does once connected; returns the text to print. */
export type AdminAction = (admin: KafkaAdmin) => Promise<string>;

/** Runs `<noun> <verb> ...`; `argv` starts after the verb. Usage errors come before any I/O. Returns the exit code. */
export async function runAdminVerb(
  noun: string,
  verbs: Readonly<Record<string, readonly OptionSpec[]>>,
  plan: (verb: string, parsed: ParsedArgs, out: Render) => AdminAction,
  verb: string,
  argv: readonly string[],
  io: CliIo,
): Promise<number> {
  const spec = verbs[verb];
  if (spec === undefined) throw new UsageError(`unknown ${noun} command "${verb}"`);
  const parsed = parseArgs(argv, spec, false);
  const action = plan(verb, parsed, renderOption(parsed));
  const once = async (): Promise<string> => {
    const admin = await connectAdmin(parsed, io.env);
    try {
      return await action(admin);
    } finally {
      await admin.close();
    }
  };
  const intervalMs = watchInterval(parsed);
  if (intervalMs !== null) return watchUntilInterrupted(intervalMs, async () => ({ text: await once(), exitCode: 0 }), io);
  io.out(await once());
  return 0;
}
