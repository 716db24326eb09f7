// Fair use through the compile door with real TeX: one failing request's TeX runs (passes and
// diagnosis probes) are bounded and printed; a caller over its failure budget gets 429 with
// Retry-After and sees the budget in /usage; file names the service writes itself are refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { failureKey } from '../../src/quota/keys.js';
import { localCompilePool } from '../../src/services.js';
import type { TexJob } from '../../src/tex/job.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const SVG = readFileSync(new URL('../fixtures/assets/diagram.svg', import.meta.url));

describe('fair use of failures, with real TeX', () => {
  let t: TestApp;
  let account: TestAccount;
  const runs: TexJob[] = [];
  let passes = 0;
  before(async () => {
    const pool = localCompilePool(loadConfig({ QUIRE_DATA_DIR: join(tmpdir(), 'quire-fair-pool'), QUIRE_SECRET: 'test-secret-0123456789abcdef', QUIRE_PREAMBLE_CACHE_MB: '0' }));
    const counting = {
      run: async (job: TexJob) => {
        runs.push(job);
        const result = await pool.run(job);
        passes += result.passes;
        return result;
      },
      merge: pool.merge.bind(pool),
      stats: () => pool.stats(),
      close: () => pool.close(),
      start: () => pool.start(),
    };
    t = await testApp({ overrides: { texQueue: counting } });
    account = await createAccount(t.services, 'free');
  });
  after(() => t.close());

  const compile = (payload: object, headers = account.headers) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers });

  test('one failing request runs at most 8 TeX passes, probes included; then the failure budget answers 429', async () => {
    // \dddot: the diagnosis confirms a package with probe compiles.
    const latex = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';
    const res = await compile({ latex });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'compilation_failed');
    const probes = runs.filter((job) => job.maxPasses === 1);
    console.log(`one failing request: ${passes} TeX passes (${runs.length - probes.length} document job, ${probes.length} probes)`);
    assert.ok(passes <= 8, `${passes} TeX passes`);
    assert.ok(runs.every((job) => job.fairness?.caller === `account:${account.id}` && job.fairness.background === false));

    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
    assert.equal(usage.fair_use.concurrent_compiles_limit, 1);
    assert.equal(usage.fair_use.compiles_in_flight, 0);
    assert.equal(usage.fair_use.failure_budget_seconds, 90);
    assert.equal(usage.usage.used_this_month, 0, 'failures cost no quota');
    // The counter in milliseconds: usage shows tenths of a second, and a failing one-pager on a
    // warm engine with its probe may take less than 50 ms in all (0.0 s shown; a flake once).
    const windowStart = new Date(Date.parse(usage.fair_use.failure_window_resets_at) - usage.fair_use.failure_window_seconds * 1000);
    const charged = await t.services.counters.get(failureKey(`account:${account.id}`, windowStart));
    assert.ok(charged.used > 0, `the failed passes and probes were charged (${charged.used} ms)`);

    // The rest of the budget goes as if more such requests had failed.
    await t.services.counters.add(failureKey(`account:${account.id}`, windowStart), 90_000, new Date(Date.now() + 86_400_000));
    const before = runs.length;
    const refused = await compile({ latex: HELLO });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, 'failure_budget_exhausted');
    assert.equal(refused.headers['retry-after'], String(refused.json().retry_after_seconds));
    assert.equal(runs.length, before, 'no TeX ran');
  });

  test('graphics.cfg in files beside an SVG asset is refused with a catalogue code, not a 500', async () => {
    const pro = await createAccount(t.services, 'pro');
    const latex = '\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n\\includegraphics{diagram.svg}\n\\end{document}\n';
    const res = await compile({ latex, files: { 'graphics.cfg': '% mine\n' }, assets: { 'diagram.svg': SVG.toString('base64') } }, pro.headers);
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'invalid_asset_filename');
    assert.equal(res.json().file, 'graphics.cfg');
    const twin = await compile({ latex, assets: { 'diagram.svg': SVG.toString('base64'), 'diagram.svg.pdf': readFileSync(new URL('../fixtures/assets/doc.pdf', import.meta.url)).toString('base64') } }, pro.headers);
    assert.equal(twin.statusCode, 422);
    assert.equal(twin.json().error, 'invalid_asset_filename');
    assert.match(twin.json().message, /diagram\.svg\.pdf/, 'the asset name rule already keeps an SVG\'s converted name');
  });
});
