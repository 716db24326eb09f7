// The diagnosis probe budget: runs per caller per minute, the node's CPU reserve, one probe at
// a time, and a grant of CPU seconds (not wall time) for each run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { ProbeRefused, WindowProbeBudget } from '../../src/compile/probe-budget.js';

const settings = { perCallerPerMinute: 3, cpuSecondsPerProbe: 2, reserveCpuSecondsPerMinute: 10 };
const run = (budget: WindowProbeBudget, caller: string) => budget.run(caller, async (grant) => grant.cpuSeconds);

describe('WindowProbeBudget', () => {
  it('grants each probe its CPU seconds and refuses a caller past its runs for the minute', async () => {
    const clock = new ManualClock();
    const budget = new WindowProbeBudget(settings, clock);
    assert.equal(budget.remaining('a'), 3);
    for (let i = 0; i < 3; i++) assert.equal(await run(budget, 'a'), 2);
    assert.equal(budget.remaining('a'), 0);
    await assert.rejects(run(budget, 'a'), (err: unknown) => err instanceof ProbeRefused && err.reason === 'caller');
    assert.equal(await run(budget, 'b'), 2, 'another caller still has its own runs');
    clock.advance(60_000);
    assert.equal(budget.remaining('a'), 3, 'the window rolls on');
    assert.equal(await run(budget, 'a'), 2);
  });

  it("refuses every caller once the node's CPU reserve for the minute is spent, charging each grant in full", async () => {
    const clock = new ManualClock();
    const budget = new WindowProbeBudget(settings, clock);
    for (const caller of ['a', 'b', 'c', 'd', 'e']) assert.equal(await run(budget, caller), 2);
    await assert.rejects(run(budget, 'f'), (err: unknown) => err instanceof ProbeRefused && err.reason === 'node');
    assert.equal(budget.remaining('f'), 3, 'the refusal is the node, not the caller');
    clock.advance(30_000);
    await assert.rejects(run(budget, 'f'));
    clock.advance(30_000);
    assert.equal(await run(budget, 'f'), 2);
  });

  it('a refused probe never runs; a failing probe still counts', async () => {
    const budget = new WindowProbeBudget({ ...settings, perCallerPerMinute: 1 }, new ManualClock());
    await assert.rejects(budget.run('a', async () => Promise.reject(new Error('TeX failed'))), /TeX failed/);
    let ran = false;
    await assert.rejects(budget.run('a', async () => (ran = true)), ProbeRefused);
    assert.equal(ran, false);
  });

  it('runs probes one at a time on the node', async () => {
    const budget = new WindowProbeBudget({ ...settings, perCallerPerMinute: 10, reserveCpuSecondsPerMinute: 100 }, new ManualClock());
    let running = 0;
    let most = 0;
    const probe = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    };
    await Promise.all(['a', 'b', 'a', 'c'].map((caller) => budget.run(caller, probe)));
    assert.equal(most, 1);
  });
});
