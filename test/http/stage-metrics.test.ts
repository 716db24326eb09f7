// /metrics exposes where compile jobs spend their time: one real pdflatex compile through the
// HTTP door adds one observation to each stage histogram (queue, sandbox, tex, inspect, reads,
// cleanup, store); a result-cache answer adds none. No timings are asserted, only counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const STAGES = ['queue', 'sandbox', 'tex', 'inspect', 'reads', 'cleanup', 'store'];

describe('stage metrics', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const counts = async () => {
    const res = await t.app.inject({ url: '/metrics' });
    assert.equal(res.statusCode, 200);
    return Object.fromEntries(
      STAGES.map((stage) => [stage, Number(new RegExp(`^quire_job_stage_seconds_count\\{stage="${stage}"\\} (\\d+)$`, 'm').exec(res.body)?.[1] ?? 0)]),
    );
  };

  test('a compile is counted once per stage; a cached answer is not', async () => {
    const before = await counts();
    const latex = '\\documentclass{article}\\begin{document}Stages.\\end{document}';
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, compiler: 'pdflatex' }, headers: account.headers });
      assert.equal(res.statusCode, 200, res.body.slice(0, 400));
      assert.equal(res.json().pages, 1);
    }
    const after = await counts();
    for (const stage of STAGES) assert.equal(after[stage]! - before[stage]!, 1, stage);
    const res = await t.app.inject({ url: '/metrics' });
    assert.match(res.body, /^# TYPE quire_job_stage_seconds histogram$/m);
    assert.match(res.body, /^quire_job_stage_seconds_bucket\{le="0\.001",stage="inspect"\} \d+$/m);
  });
});
