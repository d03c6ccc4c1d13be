// Builds everything the broker needs from the root package's own scripts (npm 11 skips
// dependencies' install scripts): TypeScript to dist/, and, when cargo is on PATH, the native
// I/O addon to native/sluice_native.node. A stale dist/ is removed first so a deleted source file
// cannot leave a test or module behind. The addon is optional: a cargo failure is one warning and
// the broker runs on the Node I/O backend.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url);
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], {
  stdio: 'inherit',
  cwd: root,
});

function buildNative() {
  if (spawnSync('cargo', ['--version'], { stdio: 'ignore' }).error) return;
  const cargo = spawnSync('cargo', ['build', '--release', '--offline', '-p', 'sluice_native'], { stdio: 'inherit', cwd: root });
  if (cargo.status !== 0) {
    console.warn('warning: native addon build failed; the broker will use the Node I/O backend');
    return;
  }
  copyFileSync(new URL('../target/release/libsluice_native.so', import.meta.url), new URL('../native/sluice_native.node', import.meta.url));
}

buildNative();
