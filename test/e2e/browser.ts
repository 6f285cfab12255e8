/**
 * The one browser fixture the page tests share (OAuth pages, the console, the MCP App host
 * page): Debian's `chromium` package driven by `playwright-core`. `.ci/run` installs the
 * package after an `apt-get update` when it is missing; a test run without it fails with a
 * message that says so rather than skipping.
 *
 * Screenshots go to `test/e2e/screenshots/` (git-ignored) so a person can look at them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Directory the page tests write their screenshots to (created on first use). */
export const SCREENSHOT_DIR = join(__dirname, 'screenshots');

/**
 * Path of the Chromium binary: `CHROMIUM_PATH` when set, else `chromium` on the PATH.
 * @throws Error naming how to install it when neither exists.
 */
export function chromiumPath(): string {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (found) return found;
    } catch {
      // not on the PATH; try the next name
    }
  }
  throw new Error(
    'No Chromium found: install Debian\'s "chromium" package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH',
  );
}

/**
 * Launches headless Chromium with the flags a root CI container needs (no sandbox, no
 * /dev/shm reliance). Close it with `browser.close()` in `afterAll`.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/**
 * Saves a full-page PNG of `page` as `test/e2e/screenshots/<name>.png` and returns its path.
 * @param name file stem, e.g. `oauth-consent`
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
