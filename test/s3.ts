// The real S3 server for tests: the Ceph RADOS Gateway started by scripts/ceph-rgw.sh, once
// per test run (a running gateway is reused), and the environment a client needs to reach it.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../scripts/ceph-rgw.sh', import.meta.url));

export interface S3Env {
  AWS_ENDPOINT_URL_S3: string;
  AWS_ACCESS_KEY_ID: string;
  AWS_SECRET_ACCESS_KEY: string;
  AWS_REGION: string;
}

let started: Promise<S3Env> | null = null;

/** Starts the gateway when it is not answering (about 17 s the first time) and returns its env. */
export function ensureRgw(): Promise<S3Env> {
  started ??= run(SCRIPT, ['start'], { timeout: 300_000, maxBuffer: 1 << 20 }).then(({ stdout }) => {
    const env: Record<string, string> = {};
    for (const match of stdout.matchAll(/^export (\w+)=(.*)$/gm)) env[match[1]!] = match[2]!;
    for (const name of ['AWS_ENDPOINT_URL_S3', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) {
      if (!env[name]) throw new Error(`scripts/ceph-rgw.sh start printed no ${name}:\n${stdout}`);
    }
    return env as unknown as S3Env;
  });
  return started;
}

/** A bucket name no other test uses (the store creates it on first use). */
export function freshBucket(): string {
  return `quire-t-${randomBytes(6).toString('hex')}`;
}
