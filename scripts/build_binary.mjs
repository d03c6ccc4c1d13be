// `npm run build:binary`: makes dist/sluice-linux-x64, one file that runs a broker with nothing
// installed (a Node single-executable application). Two esbuild bundles of the TypeScript sources
// (the CLI and the shard worker, which the executable evaluates from memory), both native addons
// (ours from native/, and @node-rs/crc32's), build.json (version, commit, the addons' SHA-256)
// and the web console's files (console/ and uPlot's) become SEA assets; postject injects them
// into a copy of this Node's executable.
// Needs native/sluice_native.node built (cargo, or `npm run build`). Prints size and build time.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const started = Date.now();
const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const work = join(root, 'dist', 'sea');
const output = join(root, 'dist', 'sluice-linux-x64');
// Node's executable carries this fuse string; postject flips it to say a blob is injected.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('the single executable is built for linux-x64 only');
const ourAddon = join(root, 'native', 'sluice_native.node');
if (!existsSync(ourAddon)) throw new Error(`${ourAddon} is missing: build it first (npm run build with cargo on PATH)`);
const crc32Addon = require.resolve('@node-rs/crc32-linux-x64-gnu/crc32.linux-x64-gnu.node');
const natives = { 'sluice_native.node': ourAddon, 'crc32.linux-x64-gnu.node': crc32Addon };

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** The bundle cannot carry @node-rs/crc32's .node file; its embedded copy is loaded instead. */
const embeddedCrc32 = {
  name: 'embedded-crc32',
  setup(b) {
    b.onResolve({ filter: /^@node-rs\/crc32$/ }, () => ({ path: join(root, 'src', 'native', 'embedded_crc32.ts') }));
  },
};

/**
 * `sluice bench` renders its plots to SVG with vega, whose Node build of vega-canvas probes for the
 * optional `canvas` package with a top-level await, which CommonJS cannot hold; its browser build
 * (no canvas outside a DOM, which SVG rendering does not need) bundles.
 */
const vegaCanvasWithoutCanvas = {
  name: 'vega-canvas-without-canvas',
  setup(b) {
    b.onResolve({ filter: /^vega-canvas$/ }, () => ({ path: join(dirname(require.resolve('vega-canvas')), 'vega-canvas.browser.js') }));
  },
};

async function bundle(entry, outfile, banner) {
  const result = await build({
    entryPoints: [join(root, entry)],
    outfile: join(work, outfile),
    bundle: true,
    platform: 'node',
    target: 'node20',
    // A SEA main script is CommonJS; its require() reaches only Node's built-in modules.
    format: 'cjs',
    // CommonJS has no import.meta: modules that locate files or make a require from their own URL
    // get the executable's (or, in a worker, the evaluated script's) URL.
    define: { 'import.meta.url': 'sluiceBundleUrl' },
    banner: { js: `const sluiceBundleUrl = require('node:url').pathToFileURL(__filename).href;\n${banner}` },
    plugins: [embeddedCrc32, vegaCanvasWithoutCanvas],
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  const inputs = Object.keys(result.metafile.inputs).filter((p) => p.includes('node_modules/'));
  const packages = new Set(inputs.map((p) => p.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')));
  console.log(`${outfile}: ${(statSync(join(work, outfile)).size / 1024).toFixed(0)} KiB, packages ${[...packages].sort().join(' ')}`);
}

// libuv sizes its thread pool (every shard's writes, fdatasyncs and fetch reads) at its first use,
// after this line; bin/sluice raises the same default of 4 from its environment.
await bundle('src/cli/main.ts', 'main.cjs', "process.env.UV_THREADPOOL_SIZE ??= '16';");
await bundle('src/server/shard_main.ts', 'shard_main.cjs', '');

function gitCommit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const buildInfo = {
  version: pkg.version,
  commit: gitCommit(),
  natives: Object.fromEntries(Object.entries(natives).map(([key, path]) => [key, sha256(path)])),
};
writeFileSync(join(work, 'build.json'), `${JSON.stringify(buildInfo, null, 2)}\n`);

// The web console's files (src/net/console_files.ts, the table the admin HTTP serves from) become
// assets under the keys the admin HTTP asks for: that table, bundled and imported here.
const consoleTable = await build({ entryPoints: [join(root, 'src', 'net', 'console_files.ts')], bundle: true, format: 'esm', platform: 'node', write: false, logLevel: 'warning' });
const { CONSOLE_FILES, consoleAssetKey } = await import(`data:text/javascript;base64,${Buffer.from(consoleTable.outputFiles[0].text).toString('base64')}`);
const consoleAssets = Object.fromEntries(CONSOLE_FILES.map((f) => [
  consoleAssetKey(f),
  'console' in f.from ? join(root, 'console', f.from.console) : require.resolve(f.from.module),
]));

writeFileSync(
  join(work, 'sea-config.json'),
  JSON.stringify({
    main: join(work, 'main.cjs'),
    output: join(work, 'sea-prep.blob'),
    disableExperimentalSEAWarning: true,
    // The code cache speeds start-up but is tied to the exact Node build; this one is that build.
    useCodeCache: true,
    assets: { 'shard_main.js': join(work, 'shard_main.cjs'), 'build.json': join(work, 'build.json'), ...natives, ...consoleAssets },
  }),
);
execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { stdio: 'pipe' });

rmSync(output, { force: true });
copyFileSync(process.execPath, output);
chmodSync(output, 0o755);
// postject warns about every unnamed ELF note section of Node's executable, harmlessly, so its
// output is shown only when the injection fails.
const inject = spawnSync(process.execPath, [require.resolve('postject/dist/cli.js'), output, 'NODE_SEA_BLOB', join(work, 'sea-prep.blob'), '--sentinel-fuse', SEA_FUSE], { encoding: 'utf8' });
if (inject.status !== 0) throw new Error(`postject failed (status ${inject.status}):\n${inject.stdout}${inject.stderr}`);
const size = statSync(output).size;
console.log(`${output}: ${(size / 1024 / 1024).toFixed(1)} MiB (${buildInfo.version}, commit ${buildInfo.commit}, node ${process.version}), built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
