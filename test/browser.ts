// Headless Chromium for browser tests: Debian's build, with the flags this closed network needs.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Screenshots for review land here (git-ignored). */
export const SHOTS = join(import.meta.dirname, '..', 'test-output');

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'];

export function launchBrowser(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** A free loopback port, for a server whose base URL must be known before it listens. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
