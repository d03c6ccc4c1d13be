// Where a CLI command reads its environment and writes its output, and how text output is laid
// out (main thread of the CLI). Commands take a CliIo instead of touching process.* so they can
// run inside tests.

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  /** Writes text plus a newline to standard output. */
  out(text: string): void;
  /** Writes text plus a newline to standard error. */
  err(text: string): void;
  /** When stderr is a terminal: replaces the status line there with text ('' clears it), so stdout stays data. Absent otherwise. */
  progress?(text: string): void;
  /** When stderr is a terminal: the stream progress bars (cli-progress) draw on. Absent otherwise. */
  readonly progressStream?: NodeJS.WritableStream;
  /** When stdout is a terminal: clears the screen (for --watch redraws). Absent otherwise. */
  clear?(): void;
}

export const processIo: CliIo = {
  env: process.env,
  out: (text) => void process.stdout.write(`${text}\n`),
  err: (text) => void process.stderr.write(`${text}\n`),
  ...(process.stdout.isTTY ? { clear: () => void process.stdout.write('\x1b[2J\x1b[H') } : {}),
  ...(process.stderr.isTTY ? { progressStream: process.stderr } : {}),
  ...(process.stderr.isTTY ? { progress: (text: string) => void process.stderr.write(`\r\x1b[2K${text.slice(0, Math.max(20, (process.stderr.columns || 80) - 1))}`) } : {}),
};

/** Aligned columns; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => { widths[i] = Math.max(widths[i] ?? 0, cell.length); });
  const line = (row: readonly string[]): string =>
    row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return rows.map(line).join('\n');
}
