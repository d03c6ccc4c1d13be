// Test helper: where Debian's Chromium is for the console's browser tests (playwright-core drives
// it), and whether those tests run. Without it they skip saying why, unless SLUICE_REQUIRE_BROWSER=1
// (CI), which turns the skip into a failure at load. Screenshots go to test-output/console/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM_PATHS = [process.env['SLUICE_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'];
export const chromiumPath = CHROMIUM_PATHS.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
if (chromiumPath === undefined && process.env['SLUICE_REQUIRE_BROWSER'] === '1') {
  throw new Error('SLUICE_REQUIRE_BROWSER=1 but no Chromium at /usr/bin/chromium (apt-get install chromium) or $SLUICE_CHROMIUM');
}
/** The reason browser tests skip, or false when they run. */
export const browserSkip: string | false = chromiumPath === undefined ? 'no Chromium (apt-get install chromium, or set SLUICE_CHROMIUM)' : false;

/** Repository-relative, git-ignored: the compiled helper sits at dist/test/helpers/. */
export const SCREENSHOTS = fileURLToPath(new URL('../../../test-output/console/', import.meta.url));

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
