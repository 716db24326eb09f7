import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig, loadMcpProxyConfig } from '../src/config.js';

test('defaults follow the documented table', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quire-cfg-'));
  try {
    const config = loadConfig({ QUIRE_DATA_DIR: dir });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.baseUrl, 'http://localhost:8080');
    assert.equal(config.databaseUrl, `sqlite://${join(dir, 'quire.db')}`);
    assert.equal(config.keyPrefix, 'svc_');
    assert.equal(config.trustProxy, false);
    assert.equal(config.sandbox, true);
    assert.deepEqual(config.mcpAllowedOrigins, ['http://localhost:8080'], '/mcp takes browser calls from its own origin only');
    assert.equal(config.queue, 'local');
    assert.equal(config.pausedPreambles, 4);
    assert.equal(config.primedFormats, 4);
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_PRIMED_FORMATS: '0' }).primedFormats, 0);
    assert.equal(config.pausedPreambleBytes, 1024 * 1024 * 1024);
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_PAUSED_PREAMBLES: '0', QUIRE_PAUSED_PREAMBLE_MB: '64' }).pausedPreambleBytes, 64 * 1024 * 1024);
    assert.equal(config.warmValidators, 1);
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_WARM_VALIDATORS: '0' }).warmValidators, 0);
    assert.throws(() => loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_WARM_VALIDATORS: '17' }), /QUIRE_WARM_VALIDATORS/);
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir, QUIRE_QUEUE: 'bullmq', QUIRE_REDIS_URL: 'redis://127.0.0.1:6379' }).queue, 'bullmq');
    const secret = (await readFile(join(dir, 'secret'), 'utf8')).trim();
    assert.equal(config.secret, secret, 'generated secret is kept in the data dir');
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir }).secret, secret, 'and reused');
    assert.equal(loadConfig({ QUIRE_DATA_DIR: dir, PORT: '9000' }).baseUrl, 'http://localhost:9000');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('bad values are refused with a message naming the variable', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quire-cfg-'));
  try {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'eighty' }, /PORT/],
      [{ QUIRE_BASE_URL: 'ftp://x' }, /QUIRE_BASE_URL/],
      [{ QUIRE_DATABASE_URL: 'mysql://x' }, /QUIRE_DATABASE_URL/],
      [{ QUIRE_KEY_PREFIX: 'a-b' }, /QUIRE_KEY_PREFIX/],
      [{ QUIRE_SECRET: 'short' }, /QUIRE_SECRET/],
      [{ QUIRE_SANDBOX: 'maybe' }, /QUIRE_SANDBOX/],
      [{ QUIRE_REDIS_URL: 'http://cache:6379' }, /QUIRE_REDIS_URL/],
      [{ QUIRE_MCP_ALLOWED_ORIGINS: 'https://app.example/path' }, /QUIRE_MCP_ALLOWED_ORIGINS/],
      [{ QUIRE_QUEUE: 'rabbitmq' }, /QUIRE_QUEUE must be local or bullmq/],
      [{ QUIRE_QUEUE: 'bullmq' }, /QUIRE_QUEUE=bullmq needs QUIRE_REDIS_URL/],
    ];
    for (const [env, message] of cases) {
      assert.throws(() => loadConfig({ QUIRE_DATA_DIR: dir, ...env }), (e: Error) => e instanceof ConfigError && message.test(e.message));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('quire mcp: QUIRE_MCP_TIMEOUT_SECONDS and QUIRE_MCP_MAX_MESSAGE_MB, with their defaults and bounds', () => {
  const defaults = loadMcpProxyConfig({});
  assert.equal(defaults.endpoint.href, 'http://localhost:8080/mcp');
  assert.equal(defaults.timeoutMs, 300_000);
  assert.equal(defaults.maxMessageBytes, 110 * 1024 * 1024);
  const set = loadMcpProxyConfig({ QUIRE_URL: 'https://q.example/base/', QUIRE_MCP_TIMEOUT_SECONDS: '2', QUIRE_MCP_MAX_MESSAGE_MB: '8' });
  assert.equal(set.endpoint.href, 'https://q.example/base/mcp');
  assert.equal(set.timeoutMs, 2000);
  assert.equal(set.maxMessageBytes, 8 * 1024 * 1024);
  assert.throws(() => loadMcpProxyConfig({ QUIRE_MCP_MAX_MESSAGE_MB: '0' }), (err: unknown) => err instanceof ConfigError && /QUIRE_MCP_MAX_MESSAGE_MB must be a whole number from 1 to 1024/.test(err.message));
  assert.throws(() => loadMcpProxyConfig({ QUIRE_MCP_MAX_MESSAGE_MB: '1.5' }), ConfigError);
});
