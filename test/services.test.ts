// Service assembly (issue #14): opening and building starts nothing, so the CLI can run beside
// a live server; only start() sweeps, clears and schedules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { openServices } from '../src/services.js';
import { testServices, type TestServices } from './helpers.js';

describe('service assembly', () => {
  let server: TestServices;

  before(async () => {
    server = await testServices();
  });
  after(async () => {
    await server.cleanup();
  });

  test('a CLI-style open beside a live SQLite server leaves its reservations alone', async () => {
    const key = `test:assembly:${Date.now()}`;
    const expires = new Date(Date.now() + 3_600_000);
    const taken = await server.counters.tryReserve(key, 1, expires);
    assert.equal(taken.ok, true);

    const cli = await openServices(server.config, { log: pino({ level: 'silent' }) });
    await cli.close();

    assert.deepEqual(await server.counters.get(key), { used: 0, reserved: 1 }, 'the live reservation is still held');
    const second = await server.counters.tryReserve(key, 1, expires);
    assert.equal(second.ok, false, 'so a second caller still cannot take the only slot');
    await server.counters.release(key, taken.lease);
  });

  test('start() is what clears a crashed single node’s reservations', async () => {
    const key = `test:assembly-start:${Date.now()}`;
    const expires = new Date(Date.now() + 3_600_000);
    assert.equal((await server.counters.tryReserve(key, 1, expires)).ok, true);

    const restarted = await openServices(server.config, { log: pino({ level: 'silent' }) });
    try {
      const { swept } = await restarted.start();
      assert.ok(Array.isArray(swept));
      assert.deepEqual(await restarted.counters.get(key), { used: 0, reserved: 0 });
    } finally {
      await restarted.close();
    }
  });
});
