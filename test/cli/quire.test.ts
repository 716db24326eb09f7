import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DB_KINDS, freshPostgres } from '../helpers.js';

const exec = promisify(execFile);

for (const db of DB_KINDS) {
  describe(`quire CLI on ${db}`, () => {
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    before(async () => {
      const dir = await mkdtemp(join(tmpdir(), 'quire-cli-'));
      env = { ...(process.env as Record<string, string>), QUIRE_DATA_DIR: dir };
      let drop = async () => {};
      if (db === 'postgres') {
        const fresh = await freshPostgres();
        env.QUIRE_DATABASE_URL = fresh.url;
        drop = fresh.drop;
      } else {
        delete env.QUIRE_DATABASE_URL;
      }
      cleanup = async () => {
        await drop();
        await rm(dir, { recursive: true, force: true });
      };
    });
    after(() => cleanup());

    async function quire(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      try {
        const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', ...args], { env });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    }

    test('every command, as JSON for scripts', async () => {
      const created = await quire('account', 'create', '--email', 'ops@example.com', '--plan', 'starter', '--json');
      assert.equal(created.code, 0, created.stderr);
      const account = JSON.parse(created.stdout);
      assert.equal(account.email, 'ops@example.com');
      assert.equal(account.plan, 'starter');
      assert.equal(typeof account.id, 'number');
      assert.match(account.api_key, /^svc_[0-9a-f]{48}$/);

      const list = JSON.parse((await quire('account', 'list', '--json')).stdout);
      assert.deepEqual(list.map((a: { email: string }) => a.email), ['ops@example.com']);

      const shown = JSON.parse((await quire('account', 'show', '--email', 'ops@example.com', '--json')).stdout);
      assert.equal(shown.api_key.prefix, account.api_key.slice(0, 12));
      assert.equal(shown.used_this_month, 0);

      const upgraded = JSON.parse((await quire('account', 'set-plan', '--email', 'ops@example.com', '--plan', 'pro', '--json')).stdout);
      assert.equal(upgraded.plan, 'pro');

      const rotated = JSON.parse((await quire('key', 'rotate', '--email', 'ops@example.com', '--json')).stdout);
      assert.match(rotated.api_key, /^svc_[0-9a-f]{48}$/);
      assert.notEqual(rotated.api_key, account.api_key);
      const afterRotate = JSON.parse((await quire('account', 'show', '--email', 'ops@example.com', '--json')).stdout);
      assert.equal(afterRotate.api_key.prefix, rotated.api_key.slice(0, 12));

      const revoked = JSON.parse((await quire('key', 'revoke', '--email', 'ops@example.com', '--json')).stdout);
      assert.deepEqual(revoked, { email: 'ops@example.com', revoked: true });
      const afterRevoke = JSON.parse((await quire('account', 'show', '--email', 'ops@example.com', '--json')).stdout);
      assert.equal(afterRevoke.api_key, null);
    });

    test('human output and errors', async () => {
      const created = await quire('account', 'create', '--email', 'human@example.com', '--plan', 'free');
      assert.equal(created.code, 0);
      assert.match(created.stdout, /API key \(shown once\): svc_[0-9a-f]{48}/);
      const dup = await quire('account', 'create', '--email', 'human@example.com', '--plan', 'free', '--json');
      assert.equal(dup.code, 1);
      assert.equal(JSON.parse(dup.stdout).error, 'email_taken');
      const missing = await quire('account', 'show', '--email', 'nobody@example.com');
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /no account for nobody@example.com/);
      const usage = await quire('account', 'fly');
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /unknown command/);
      const noPlan = await quire('account', 'create', '--email', 'x@example.com');
      assert.equal(noPlan.code, 2);
      assert.match(noPlan.stderr, /--plan is required/);
    });
  });
}
