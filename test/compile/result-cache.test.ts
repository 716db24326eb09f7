// The result cache end to end: an identical request is answered from the cache with the same
// PDF bytes, a new job and link, and a charged compile; another account, another engine or
// other asset bytes run TeX again. The cache's own bounds are checked directly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { ResultCache, resultKey } from '../../src/compile/result-cache.js';
import type { TexResult } from '../../src/tex/job.js';
import { createAccount, HELLO, testApp } from '../helpers.js';

const path = (url: string) => new URL(url).pathname + new URL(url).search;

describe('result cache', () => {
  test('an identical request returns the same PDF without TeX, with a new link, and is charged', async () => {
    const clock = new ManualClock(new Date('2026-05-20T08:00:00Z'));
    const t = await testApp({ clock });
    try {
      let texRuns = 0;
      const jobs = t.services.texQueue;
      const run = jobs.run.bind(jobs);
      jobs.run = (job) => {
        texRuns++;
        return run(job);
      };
      const alice = await createAccount(t.services, 'pro');
      const bob = await createAccount(t.services, 'pro');
      const compile = (headers: Record<string, string>, payload: Record<string, unknown> = { latex: HELLO }) =>
        t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers });

      const first = await compile(alice.headers);
      assert.equal(first.statusCode, 200);
      assert.equal(texRuns, 1);
      const second = await compile(alice.headers);
      assert.equal(second.statusCode, 200);
      assert.equal(texRuns, 1, 'the second request ran no TeX');
      const counted = await t.services.metrics.registry.getSingleMetricAsString('quire_result_cache_hits_total');
      assert.match(counted, /^quire_result_cache_hits_total 1$/m, 'the hit is counted (the bench reads it)');
      assert.notEqual(second.json().job_id, first.json().job_id);
      assert.notEqual(second.json().pdf_url, first.json().pdf_url);
      assert.equal(second.json().pages, first.json().pages);
      assert.equal(second.json().usage.used_this_month, 2, 'both requests are charged');
      const [a, b] = await Promise.all([first, second].map((r) => t.app.inject({ method: 'GET', url: path(r.json().pdf_url) })));
      assert.equal(a!.statusCode, 200);
      assert.equal(b!.statusCode, 200);
      assert.ok(a!.rawPayload.equals(b!.rawPayload), 'identical bytes');

      // Another account with the same source: its own TeX run.
      const other = await compile(bob.headers);
      assert.equal(other.statusCode, 200);
      assert.equal(texRuns, 2);
      assert.equal(other.json().usage.used_this_month, 1);
      // Another engine, another file's bytes: TeX again.
      assert.equal((await compile(alice.headers, { latex: HELLO, compiler: 'xelatex' })).statusCode, 200);
      assert.equal(texRuns, 3);
      const asset = (text: string) => ({ latex: HELLO, files: { 'note.tex': text } });
      assert.equal((await compile(alice.headers, asset('one'))).statusCode, 200);
      assert.equal((await compile(alice.headers, asset('two'))).statusCode, 200);
      assert.equal(texRuns, 5);
      assert.equal((await compile(alice.headers, asset('one'))).statusCode, 200);
      assert.equal(texRuns, 5);
      // The next UTC day (\today) runs TeX again.
      clock.advance(24 * 3600 * 1000);
      assert.equal((await compile(alice.headers)).statusCode, 200);
      assert.equal(texRuns, 6);
    } finally {
      await t.close();
    }
  });

  test('a failed compile is not cached', async () => {
    const t = await testApp();
    try {
      let texRuns = 0;
      const jobs = t.services.texQueue;
      const run = jobs.run.bind(jobs);
      jobs.run = (job) => {
        texRuns++;
        return run(job);
      };
      const alice = await createAccount(t.services, 'pro');
      const broken = { latex: '\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}' };
      for (let i = 0; i < 2; i++) {
        const r = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: broken, headers: alice.headers });
        assert.equal(r.statusCode, 422);
        assert.equal(r.json().error, 'compilation_failed');
      }
      assert.equal(texRuns, 2);
    } finally {
      await t.close();
    }
  });

  test('keys separate scopes and parts; the cache is bounded by entries and bytes, least recently used out', () => {
    const base = { scope: 'account:1', compiler: 'pdflatex', source: 'x', files: [], timeoutMs: 1000, maxFileBytes: 10, keepPages: undefined, day: '2026-05-20' };
    const keys = new Set([
      resultKey(base),
      resultKey({ ...base, scope: 'account:2' }),
      resultKey({ ...base, scope: 'public' }),
      resultKey({ ...base, compiler: 'xelatex' }),
      resultKey({ ...base, timeoutMs: 2000 }),
      resultKey({ ...base, maxFileBytes: 11 }),
      resultKey({ ...base, keepPages: 3 }),
      resultKey({ ...base, day: '2026-05-21' }),
      resultKey({ ...base, files: [{ name: 'a', data: Buffer.from('b') }] }),
      resultKey({ ...base, files: [{ name: 'ab', data: Buffer.alloc(0) }] }),
      resultKey({ ...base, source: 'x1' }),
    ]);
    assert.equal(keys.size, 11);
    assert.equal(resultKey({ ...base, files: [{ name: 'a', data: Buffer.from('1') }, { name: 'b', data: Buffer.from('2') }] }), resultKey({ ...base, files: [{ name: 'b', data: Buffer.from('2') }, { name: 'a', data: Buffer.from('1') }] }));

    const ok = (bytes: number): TexResult => ({ outcome: 'ok', pdf: Buffer.alloc(bytes), pages: 1, totalPages: 1, log: '', passes: 1, durationMs: 1 });
    const cache = new ResultCache({ maxEntries: 2, maxBytes: 10_000 });
    cache.set('a', ok(100));
    cache.set('b', ok(100));
    assert.ok(cache.get('a'));
    cache.set('c', ok(100));
    assert.equal(cache.get('b'), undefined, 'least recently used went');
    assert.ok(cache.get('a'));
    assert.ok(cache.get('c'));
    cache.set('d', ok(8_000));
    assert.deepEqual(cache.size, { entries: 1, bytes: 9_024 });
    cache.set('e', ok(20_000));
    assert.equal(cache.get('e'), undefined, 'larger than the whole cache: not kept');
    cache.set('f', { outcome: 'failed', log: 'x', passes: 1, durationMs: 1 });
    assert.equal(cache.get('f'), undefined);
  });
});
