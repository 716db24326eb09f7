// The validate gate (src/compile/validate-gate.ts): at most `atOnce` calls run, the next ones
// wait in order, and past `waitingMax` waiting a call is refused at once with 503 server_busy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { ValidateGate } from '../../src/compile/validate-gate.js';

test('two run at once, the rest wait in order, and past the bound a call gets server_busy', async () => {
  const gate = new ValidateGate(2, 3);
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const releases: Array<() => void> = [];
  const call = (n: number) =>
    gate.run(async () => {
      running++;
      most = Math.max(most, running);
      order.push(n);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      return n;
    });
  const calls = [1, 2, 3, 4, 5].map(call);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, [1, 2]);
  await assert.rejects(call(6), (err: unknown) => {
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, 'server_busy');
    assert.equal(err.status, 503);
    assert.equal(err.body().retry_after_seconds, 5);
    return true;
  });
  while (releases.length > 0 || order.length < 5) {
    releases.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(await Promise.all(calls), [1, 2, 3, 4, 5]);
  assert.deepEqual(order, [1, 2, 3, 4, 5]);
  assert.equal(most, 2);
  // Every slot came back: two run at once again.
  const again = [7, 8].map(call);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order.slice(5), [7, 8]);
  releases.splice(0).forEach((release) => release());
  assert.deepEqual(await Promise.all(again), [7, 8]);
});
