// Builds everything the broker needs from the root package's own scripts (npm 11 skips
// dependencies' install scripts): TypeScript to dist/. A stale dist/ is removed first so a
// deleted source file cannot leave a test or module behind.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], {
  stdio: 'inherit',
  cwd: new URL('..', import.meta.url),
});
