// The web console's static files (a constant table, no thread of its own): the admin HTTP (main
// thread) serves them, and scripts/build_binary.mjs embeds the same list in the single
// executable, where neither console/ nor node_modules exists. Each file has its URL path, its
// content type, where it lies in an installation (console/ of the package, or a module file
// resolved from node_modules) and its asset key inside the executable.

export interface ConsoleFile {
  readonly path: string;
  readonly type: string;
  /** A file of the package's console/ folder, or a module file (e.g. 'uplot/dist/uPlot.esm.js'). */
  readonly from: { readonly console: string } | { readonly module: string };
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

export const CONSOLE_FILES: readonly ConsoleFile[] = [
  { path: '/', type: 'text/html; charset=utf-8', from: { console: 'index.html' } },
  { path: '/console/console.js', type: JS, from: { console: 'console.js' } },
  { path: '/console/views.js', type: JS, from: { console: 'views.js' } },
  { path: '/console/console.css', type: CSS, from: { console: 'console.css' } },
  { path: '/console/vendor/uPlot.esm.js', type: JS, from: { module: 'uplot/dist/uPlot.esm.js' } },
  { path: '/console/vendor/uPlot.min.css', type: CSS, from: { module: 'uplot/dist/uPlot.min.css' } },
];

/** The file's key among the single executable's assets, which also names it in a 404. */
export function consoleAssetKey(f: ConsoleFile): string {
  return 'console' in f.from ? `console/${f.from.console}` : f.from.module;
}
