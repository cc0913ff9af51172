import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * The Chromium the browser suite drives: JUNCTION_TEST_CHROMIUM, else Debian's package. Playwright
 * downloads no browser here (playwright-core); without one, the suite says it is skipped.
 */
export const CHROMIUM = process.env['JUNCTION_TEST_CHROMIUM'] || '/usr/bin/chromium';

export function chromiumFound(): boolean {
  return existsSync(CHROMIUM);
}

export function sayChromiumSkipped(suite: string): void {
  console.log(`  skipped: ${suite} (Chromium): no browser at ${CHROMIUM}; apt-get install chromium, or set JUNCTION_TEST_CHROMIUM=/path/to/chromium to run it`);
}

/** Headless; Chromium's sandbox cannot start as root (a container, CI), so it is off only then. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
}
