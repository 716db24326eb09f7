// What every Counters implementation must do, run against each of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Counters } from '../../src/quota/counters.js';

export function counterContract(counters: () => Counters): void {
  const expires = () => new Date(Date.now() + 86_400_000);

  test('20 concurrent reservations against a limit of 3 take exactly 3 slots', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => counters().tryReserve('k:race', 3, expires())));
    assert.equal(results.filter((r) => r.ok).length, 3);
    assert.deepEqual(await counters().get('k:race'), { used: 0, reserved: 3 });
  });

  test('commit counts, release frees the slot', async () => {
    const c = counters();
    assert.equal((await c.tryReserve('k:cr', 2, expires())).ok, true);
    assert.equal((await c.tryReserve('k:cr', 2, expires())).ok, true);
    const refused = await c.tryReserve('k:cr', 2, expires());
    assert.deepEqual(refused, { ok: false, used: 0, reserved: 2 });
    await c.release('k:cr');
    await c.commit('k:cr');
    assert.deepEqual(await c.get('k:cr'), { used: 1, reserved: 0 });
    assert.equal((await c.tryReserve('k:cr', 2, expires())).ok, true);
    assert.equal((await c.tryReserve('k:cr', 2, expires())).ok, false, 'one used and one reserved fill a limit of 2');
  });

  test('an unknown key reads as zero', async () => {
    assert.deepEqual(await counters().get('k:never'), { used: 0, reserved: 0 });
  });
}
