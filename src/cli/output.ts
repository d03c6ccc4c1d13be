// How every CLI verb prints its result (main thread of the CLI process): the one --format option
// (text, wide, json, yaml) and the one renderer all verbs share. A verb hands over its result
// once as data (the JSON/YAML shape, whose field names are stable) and once as tables; `wide` is
// the tables with the extra columns a verb offers (the same as text where it has none).
import { dump } from 'js-yaml';
import { UsageError, optionValue } from './args.js';
import type { ParsedArgs } from './args.js';

export const OUTPUT_FORMATS = ['text', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The tables of a result: a string, or a function told whether the wide columns are wanted. */
export type TextForm = string | ((wide: boolean) => string);

/** Renders one result in the chosen format. */
export type Render = (value: unknown, text: TextForm) => string;

/** The --format option; text by default. */
export function formatOption(parsed: ParsedArgs): OutputFormat {
  const f = optionValue(parsed, 'format') ?? 'text';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(f)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got "${f}"`);
  return f as OutputFormat;
}

/** The structured forms (json, yaml) are data, so they carry exactly the JSON data model. */
export function isStructured(format: OutputFormat): boolean {
  return format === 'json' || format === 'yaml';
}

export function renderer(format: OutputFormat): Render {
  return (value, text) => {
    switch (format) {
      case 'json':
        return JSON.stringify(value, null, 2);
      case 'yaml':
        // Through JSON first: YAML then shows what JSON shows (no undefined, Dates as strings).
        return dump(JSON.parse(JSON.stringify(value ?? null)) as unknown, { noRefs: true, lineWidth: -1 }).trimEnd();
      default:
        return typeof text === 'string' ? text : text(format === 'wide');
    }
  };
}

/** The renderer of the --format option. */
export function renderOption(parsed: ParsedArgs): Render {
  return renderer(formatOption(parsed));
}

/**
 * One item of a stream (a consumed record, a produce acknowledgement, a progress status) in a
 * structured format: JSON as one line per item (NDJSON), YAML as one document per item.
 */
export function streamItem(format: 'json' | 'yaml', value: unknown): string {
  return format === 'json' ? JSON.stringify(value) : `---\n${renderer('yaml')(value, '')}`;
}
