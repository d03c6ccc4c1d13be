// `sluice config print`: the configuration `sluice start` would use, with where each value came
// from. Runs in the CLI process.
import { describeConfig, resolveConfig } from '../config.js';
import { UsageError, parseArgs } from './args.js';
import { CONFIG_SOURCES_HELP, configFlagsHelp } from './help.js';
import type { CliIo } from './io.js';
import { renderOption } from './output.js';

export const configPrintHelp = (): string => `Usage: sluice config print [--effective] [--format FORMAT] [options]

Prints the configuration 'sluice start' would use with the same flags and environment, with
the source of each value (flag, env, file, default). Without --effective only the values that
are set somewhere are printed.

${CONFIG_SOURCES_HELP}

Options:
  --effective            print every setting, defaults included
  --format FORMAT        text, wide, json or yaml [text]
${configFlagsHelp()}`;

export function runConfigPrint(argv: readonly string[], io: CliIo): void {
  const parsed = parseArgs(argv, [{ name: 'effective', switch: true }, { name: 'format' }], true);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
  const out = renderOption(parsed);
  const { config, sources } = resolveConfig(parsed.configArgv, io.env);
  const effective = parsed.options.has('effective');
  const { data, text } = describeConfig(config, sources, (e) => effective || e.source !== 'default');
  io.out(out(data, text));
}
