// The single executable as a new user meets it: dist/sluice-linux-x64 copied alone into an empty
// directory (no node_modules anywhere above it, no dist/), run from there with an empty cache
// directory, answers `--version`, serves kcat with `--io native` and with `--io node` (and, on
// the first, the web console and uPlot from its own assets at the admin port), and stops
// on SIGTERM with exit code 0. Uses the executable `npm run build:binary` made (CI builds it in
// the step before), or builds it when it is missing; without the native addon (no cargo) there is
// nothing to embed and the suite is skipped, unless SLUICE_REQUIRE_NATIVE=1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrokerProcess } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { consumeArgs, kcat, kcatInput, parseKcatOutput, produceArgs } from '../helpers/kcat.js';
import { testMessage } from '../helpers/messages.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUILT = join(ROOT, 'dist', 'sluice-linux-x64');
const ADDON = join(ROOT, 'native', 'sluice_native.node');
const nativeRequired = process.env['SLUICE_REQUIRE_NATIVE'] === '1';
const skip = !existsSync(ADDON) && !nativeRequired ? 'native/sluice_native.node is not built (no cargo): nothing to embed' : false;
const MESSAGES = 200;

/** The user's environment: no Node settings inherited from the test runner, a fresh cache. */
function userEnv(cacheHome: string): Record<string, string | undefined> {
  return { XDG_CACHE_HOME: cacheHome, NODE_OPTIONS: undefined, NODE_PATH: undefined, UV_THREADPOOL_SIZE: undefined, NODE_TEST_CONTEXT: undefined };
}

/** The web console's page and uPlot, answered from the executable's own assets (no console/ or node_modules beside it). */
async function assertServesConsole(adminUrl: string): Promise<void> {
  const get = async (path: string): Promise<{ type: string; body: string }> => {
    const res = await fetch(`${adminUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    assert.equal(res.status, 200, `${path}: ${body.slice(0, 200)}`);
    return { type: res.headers.get('content-type') ?? '', body };
  };
  const page = await get('/');
  assert.match(page.type, /^text\/html/);
  assert.match(page.body, /<script[^>]+src="\/console\/console\.js"/);
  const uplot = await get('/console/vendor/uPlot.esm.js');
  assert.match(uplot.type, /^text\/javascript/);
  assert.match(uplot.body, /export \{[^}]*uPlot as default|export default uPlot/);
  assert.match((await get('/console/vendor/uPlot.min.css')).type, /^text\/css/);
  assert.match((await get('/console/console.js')).type, /^text\/javascript/);
}

describe('single executable', { skip }, () => {
  let dir = '';
  let executable = '';
  let cacheHome = '';

  before(() => {
    if (!existsSync(BUILT)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build_binary.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
    dir = mkdtempSync(join(tmpdir(), 'sluice-binary-'));
    executable = join(dir, 'sluice');
    copyFileSync(BUILT, executable);
    cacheHome = mkdtempSync(join(tmpdir(), 'sluice-binary-cache-'));
  });

  after(() => {
    for (const d of [dir, cacheHome]) if (d !== '') rmSync(d, { recursive: true, force: true });
  });

  it('prints its version, commit, Node version and I/O backend', async () => {
    const env = Object.fromEntries(Object.entries({ ...process.env, ...userEnv(cacheHome) }).filter((e): e is [string, string] => e[1] !== undefined));
    const r = await run(executable, ['--version'], { timeoutMs: 30_000, env });
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.toString();
    assert.match(out, /^sluice \d+\.\d+\.\d+$/m);
    assert.match(out, /^commit [0-9a-f]{12}(-dirty)?$/m);
    assert.match(out, new RegExp(`^node ${process.version.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(out, /^io native$/m);
    assert.match(out, new RegExp(`^from single executable ${executable}$`, 'm'));
    // Neither a warning (the experimental SEA one is disabled) nor anything else on stderr.
    assert.equal(r.stderr, '');
    // The addons were extracted to the versioned cache, verified; nothing was written beside the executable.
    const [versionDir, ...others] = readdirSync(join(cacheHome, 'sluice'));
    assert.equal(others.length, 0);
    assert.match(versionDir ?? '', /^\d+\.\d+\.\d+-[0-9a-f]{16}$/);
    assert.deepEqual(readdirSync(join(cacheHome, 'sluice', versionDir ?? '')).sort(), ['crc32.linux-x64-gnu.node', 'sluice_native.node']);
    assert.deepEqual(readdirSync(dir), ['sluice']);
  });

  for (const io of ['native', 'node'] as const) {
    it(`serves kcat with --io ${io} from an empty directory and stops on SIGTERM with exit 0`, async (t) => {
      const started = Date.now();
      const broker = await BrokerProcess.start({ executable, cwd: dir, env: userEnv(cacheHome), args: ['--io', io], logLevel: 'info' });
      try {
        await kcat(['-b', broker.bootstrap, '-L', '-J']);
        t.diagnostic(`start to first kcat answer: ${Date.now() - started} ms`);
        if (io === 'native') await assertServesConsole(`http://${broker.host}:${broker.adminPort}`);
        assert.match(broker.logTail(200), new RegExp(`"msg":"io backend: ${io}`), 'the broker reports the I/O backend it was told to use');
        const topic = `binary-${io}`;
        const sent = Array.from({ length: MESSAGES }, (_, i) => testMessage(topic, i));
        await kcat(produceArgs(broker.bootstrap, topic, ['-p', '0']), { input: kcatInput(sent) });
        const out = await kcat(consumeArgs(broker.bootstrap, topic, 0));
        const got: Buffer[] = [];
        parseKcatOutput(out.stdout, (r) => {
          assert.equal(r.offset, got.length);
          got.push(r.value ?? Buffer.alloc(0));
          assert.deepEqual(r.key, sent[got.length - 1]?.key);
        });
        assert.deepEqual(got, sent.map((m) => m.value));
        assert.deepEqual(await broker.stop(), { code: 0, signal: null });
        assert.deepEqual(readdirSync(dir), ['sluice']);
      } finally {
        await broker.dispose();
      }
    });
  }
});
