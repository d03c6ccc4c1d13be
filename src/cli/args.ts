// Command-line parsing for the CLI (main thread, once per invocation). Splits argv into a
// command's own options, broker config flags (handed verbatim to resolveConfig, which validates
// them) and positionals. Forms: --name value, --name=value, bare --flag for switches and boolean
// config flags, --flag true|false and --no-<flag> for boolean config flags, -h/--help, and -- to
// end options.

import { CONFIG_FILE_FLAG, CONFIG_FLAGS } from '../config.js';

export interface OptionSpec {
  readonly name: string;
  /** A switch takes no value (--effective); anything else does. */
  readonly switch?: true;
  readonly repeatable?: true;
  /** Takes a number when one follows (--watch, --watch 5); 'true' otherwise. */
  readonly optionalNumber?: true;
}

export interface ParsedArgs {
  readonly positionals: string[];
  /** Values per command option name (switches hold 'true'). */
  readonly options: Map<string, string[]>;
  /** Config flags with their values, in order, for resolveConfig. */
  readonly configArgv: string[];
  readonly help: boolean;
}

/** Bad usage: the message says what, the CLI adds where to find help. Exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const CONFIG_FLAG_KIND: ReadonlyMap<string, 'bool' | 'value'> = new Map<string, 'bool' | 'value'>([
  ...CONFIG_FLAGS.map((f): [string, 'bool' | 'value'] => [f.flag, f.boolean ? 'bool' : 'value']),
  [CONFIG_FILE_FLAG, 'value'],
]);

function configFlagTakesNext(name: string, inlineValue: string | undefined): boolean | undefined {
  const bare = name.startsWith('no-') && CONFIG_FLAG_KIND.get(name.slice(3)) === 'bool' ? 'bool' : undefined;
  const kind = CONFIG_FLAG_KIND.get(name) ?? bare;
  if (kind === undefined) return undefined;
  return kind === 'value' && inlineValue === undefined;
}

/**
 * Parses argv. Command options shadow config flags of the same name (topic create's
 * --config k=v); config flags are accepted only when `configFlags` is set.
 */
export function parseArgs(argv: readonly string[], spec: readonly OptionSpec[], configFlags: boolean): ParsedArgs {
  const byName = new Map(spec.map((s) => [s.name, s]));
  const parsed: ParsedArgs = { positionals: [], options: new Map(), configArgv: [], help: false };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (token === '-h' || token === '--help') {
      return { ...parsed, help: true };
    }
    const m = /^--([a-z][a-z0-9-]*)(?:=([\s\S]*))?$/.exec(token);
    if (m === null) {
      if (token.startsWith('-') && token !== '-') throw new UsageError(`unknown option ${token}`);
      parsed.positionals.push(token);
      continue;
    }
    const name = m[1] as string;
    const inline = m[2];
    const own = byName.get(name);
    if (own !== undefined) {
      i = takeOwn(parsed, own, inline, argv, i);
      continue;
    }
    const takesNext = configFlags ? configFlagTakesNext(name, inline) : undefined;
    if (takesNext === undefined) throw new UsageError(`unknown option --${name}`);
    const next = argv[i + 1];
    if (!takesNext && inline === undefined && CONFIG_FLAG_KIND.get(name) === 'bool' && (next === 'true' || next === 'false')) {
      // `--auto-create-topics false`, as users of other brokers' CLIs type it.
      parsed.configArgv.push(`--${name}=${next}`);
      i++;
      continue;
    }
    parsed.configArgv.push(token);
    if (takesNext) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      parsed.configArgv.push(value);
    }
  }
  return parsed;
}

/** Records one of the command's own options; returns the index of the last token used. */
function takeOwn(
  parsed: ParsedArgs, spec: OptionSpec, inline: string | undefined, argv: readonly string[], i: number,
): number {
  let value = inline;
  let next = i;
  if (spec.switch === true) {
    if (inline !== undefined) throw new UsageError(`--${spec.name} takes no value`);
    value = 'true';
  } else if (spec.optionalNumber === true) {
    const following = argv[i + 1];
    if (value === undefined && following !== undefined && /^\d+(\.\d+)?$/.test(following)) value = argv[++next];
    value ??= 'true';
  } else if (value === undefined) {
    value = argv[++next];
    if (value === undefined) throw new UsageError(`--${spec.name} needs a value`);
  }
  const values = parsed.options.get(spec.name);
  if (values === undefined) parsed.options.set(spec.name, [value]);
  else if (spec.repeatable === true) values.push(value);
  else throw new UsageError(`--${spec.name} given more than once`);
  return next;
}

/** The single value of an option, or undefined. */
export function optionValue(parsed: ParsedArgs, name: string): string | undefined {
  return parsed.options.get(name)?.[0];
}

/** An integer option value, checked against a range. */
export function intOption(parsed: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const raw = optionValue(parsed, name);
  if (raw === undefined) return undefined;
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  }
  return n;
}
