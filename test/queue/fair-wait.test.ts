// The fair order of waiting TeX jobs: interactive before background, callers in turn, each
// caller's jobs in arrival order; and the BullMQ priority that gives the same order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fairPriority, FairWaitList } from '../../src/queue/fair-wait.js';

test("one caller's hundred waiting jobs delay another caller's one job by one job", () => {
  const list = new FairWaitList<string>();
  for (let i = 0; i < 100; i++) list.push(`a${i}`, { caller: 'account:1', background: false });
  list.push('b0', { caller: 'account:2', background: false });
  assert.equal(list.length, 101);
  assert.deepEqual([list.shift(), list.shift(), list.shift()], ['a0', 'b0', 'a1']);
  assert.equal(list.length, 98);
});

test('interactive jobs are served before background ones, whoever came first', () => {
  const list = new FairWaitList<string>();
  list.push('batch1', { caller: 'account:1', background: true });
  list.push('batch2', { caller: 'account:1', background: true });
  list.push('sync', { caller: 'account:1', background: false });
  list.push('anon', { caller: 'anon:1.2.3.4', background: false });
  assert.deepEqual([list.shift(), list.shift(), list.shift(), list.shift(), list.shift()], ['sync', 'anon', 'batch1', 'batch2', undefined]);
});

test('property: each caller waits at most one job per other waiting caller, and its own jobs keep their order', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 200 }), (callers) => {
      const list = new FairWaitList<{ caller: number; seq: number }>();
      const seqs = new Map<number, number>();
      for (const caller of callers) {
        const seq = seqs.get(caller) ?? 0;
        seqs.set(caller, seq + 1);
        list.push({ caller, seq }, { caller: String(caller), background: false });
      }
      const served: Array<{ caller: number; seq: number }> = [];
      for (let item = list.shift(); item; item = list.shift()) served.push(item);
      assert.equal(served.length, callers.length);
      const distinct = seqs.size;
      for (const [caller] of seqs) {
        const positions = served.flatMap((item, i) => (item.caller === caller ? [i] : []));
        // The caller's k-th job is served within the first (k + 1) rounds of every caller.
        positions.forEach((position, k) => assert.ok(position < (k + 1) * distinct));
        assert.deepEqual(served.filter((item) => item.caller === caller).map((item) => item.seq), [...Array(positions.length).keys()]);
      }
    }),
  );
});

test('BullMQ priorities: turns first, background after every interactive job, within BullMQ range', () => {
  assert.equal(fairPriority(0, false), 1);
  assert.ok(fairPriority(0, false) < fairPriority(1, false));
  assert.ok(fairPriority(5000, false) < fairPriority(0, true));
  assert.equal(fairPriority(10_000_000, true), 2_097_152);
});

test('property: `ahead` is the number of waiting jobs served before one more, whatever was pushed and served before', () => {
  const op = fc.oneof(fc.record({ caller: fc.integer({ min: 0, max: 3 }), background: fc.boolean() }), fc.constant('shift' as const));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 0, max: 4 }), fc.boolean(), (ops, caller, background) => {
      const list = new FairWaitList<string>();
      ops.forEach((o, i) => (o === 'shift' ? list.shift() : list.push(`j${i}`, { caller: String(o.caller), background: o.background })));
      const fairness = { caller: String(caller), background };
      const ahead = list.ahead(fairness);
      list.push('X', fairness);
      const served: string[] = [];
      for (let item = list.shift(); item; item = list.shift()) served.push(item);
      assert.equal(served.indexOf('X'), ahead);
    }),
    { numRuns: 500 },
  );
});
