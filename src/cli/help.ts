// Help text shared by several verbs of the `sluice` command line: the broker settings (start and
// config print), the client connection options (topic and group verbs), and how --help is asked
// for. Each verb's own help lives beside the verb. Runs in the CLI process.
import { CONFIG_FLAGS } from '../config.js';
import { table } from './io.js';
import type { CliIo } from './io.js';

export function configFlagsHelp(): string {
  const rows = CONFIG_FLAGS.map((f) => [`  --${f.flag} ${f.hint}`, `${f.help} [${String(f.defaultValue)}]`]);
  return table([['  --config FILE', 'JSON file of settings, e.g. {"data-dir": "/var/lib/sluice", "flush": "10"}'], ...rows]);
}

export const CONFIG_SOURCES_HELP = `Each setting is taken from, in order: its flag, the environment variable SLUICE_<FLAG>
(e.g. SLUICE_DATA_DIR; SLUICE_CONFIG names the config file), the config file (keys are flag
names), then the default shown in brackets.`;

export const CLIENT_OPTIONS_HELP = `  --brokers HOST:PORT[,HOST:PORT...]  brokers to bootstrap from [the resolved kafka-addr]
  --format text|wide|json|yaml        output format; wide adds columns [text]
  --timeout-ms N                      request timeout [30000]`;

export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export function printHelp(io: CliIo, text: string): number {
  io.out(text);
  return 0;
}
