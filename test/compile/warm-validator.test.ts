// Warm PDF/A-1b validators (src/tex/output/warm-validator.ts) end to end: real TeX, the real
// sandbox, real Java. A job takes a waiting validator and the metric says so; a failing PDF
// gets the very reasons the cold path gives; a validator killed before use, or while it
// holds a job, leaves the job to the cold path with the right verdict; 0 turns them off.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { preflightSample } from '../../src/tex/output/preflight-sample.js';
import { WarmValidators } from '../../src/tex/output/warm-validator.js';
import { sandboxUid, validatorUid } from '../../src/tex/sandbox/uids.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const TRANSPARENT = (n: number) =>
  `\\documentclass{article}\n\\begin{document}\nSee through ${n}.\\pdfpageresources{/ExtGState << /T << /ca 0.5 >> >>}\\pdfliteral{/T gs}\n\\end{document}\n`;
const HELLO = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, archive ${n}.\n\\end{document}\n`;
const TRANSPARENCY_REASON = 'PDFBox Preflight 4.1.2 Transparency error, ca entry in a ExtGState is invalid';

/** The PreflightServer JVMs below `roots` (default: this process; through the launcher and bubblewrap). */
async function validatorJavas(roots: number[] = [process.pid]): Promise<number[]> {
  const parent = new Map<number, number>();
  const javas: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
    parent.set(Number(name), Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0));
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (/^Name:\s+java$/m.test(status) && cmdline.includes('PreflightServer')) javas.push(Number(name));
  }
  const ours = (pid: number): boolean => {
    for (let at = pid, hops = 0; at > 1 && hops < 32; at = parent.get(at) ?? 0, hops++) if (roots.includes(at)) return true;
    return false;
  };
  return javas.filter(ours);
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('warm PDF/A-1b validators', () => {
  let warm: TestApp;
  let cold: TestApp;
  let warmKey: TestAccount;
  let coldKey: TestAccount;
  let dir: string;
  let n = 0;
  const compile = (t: TestApp, key: TestAccount, latex: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, output: { pdf_standard: 'a-1b' } }, headers: key.headers });
  /** quire_pdfa_* metric values by name and path label. */
  const metric = async (t: TestApp, name: string, path?: string) => {
    const values = (await t.services.metrics.registry.getSingleMetric(name)!.get()).values;
    return values.find((v) => v.labels.path === path)?.value ?? 0;
  };
  const counts = async (t: TestApp) => ({
    warm: await metric(t, 'quire_pdfa_validations_total', 'warm'),
    cold: await metric(t, 'quire_pdfa_validations_total', 'cold'),
    failed: await metric(t, 'quire_pdfa_validators_failed_total'),
    started: await metric(t, 'quire_pdfa_validators_started_total'),
  });
  const ready = (t: TestApp) => until('a ready validator', async () => (await metric(t, 'quire_pdfa_validators_ready')) === 1);
  const coldReasons = async (latex: string) => {
    const res = await compile(cold, coldKey, latex);
    assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
    return res.json().reasons as string[];
  };

  before(async () => {
    warm = await testApp({ env: { QUIRE_WARM_VALIDATORS: '1' } });
    cold = await testApp({ env: { QUIRE_WARM_VALIDATORS: '0' } });
    warmKey = await createAccount(warm.services, 'pro');
    coldKey = await createAccount(cold.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-warm-validator-'));
  });
  after(async () => {
    await warm.close();
    await cold.close();
    assert.deepEqual(await validatorJavas(), [], 'closing the service ends its validators');
    await rm(dir, { recursive: true, force: true });
  });

  test('the first PDF/A-1b job runs Preflight cold and starts a validator; the next is validated warm', async () => {
    const first = await compile(warm, warmKey, HELLO(++n));
    assert.equal(first.statusCode, 200, first.body.slice(0, 2000));
    assert.deepEqual(await counts(warm), { warm: 0, cold: 1, failed: 0, started: 1 });
    await ready(warm);
    assert.equal((await validatorJavas()).length, 1);

    const secondN = ++n;
    const second = await compile(warm, warmKey, HELLO(secondN));
    assert.equal(second.statusCode, 200, second.body.slice(0, 2000));
    assert.deepEqual(await counts(warm), { warm: 1, cold: 1, failed: 0, started: 2 });
    // The JVM that answered is kept for this account; a fresh one waits for anyone else.
    await ready(warm);
    assert.equal((await validatorJavas()).length, 2);
    const third = await compile(warm, warmKey, HELLO(++n));
    assert.equal(third.statusCode, 200, third.body.slice(0, 2000));
    assert.deepEqual(await counts(warm), { warm: 2, cold: 1, failed: 0, started: 2 }, 'the account\'s own JVM again: none started');
    // The PDF delivered is the job's own, PDF/A-1b.
    const pdf = await warm.app.inject({ method: 'GET', url: new URL(second.json().pdf_url).pathname + new URL(second.json().pdf_url).search });
    const file = join(dir, 'second.pdf');
    await writeFile(file, pdf.rawPayload);
    assert.match(execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' }), /pdfaid:part(>|=")1/);
    assert.match(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }), new RegExp(`Hello, archive ${secondN}\\.`));
  });

  test('a PDF with transparency gets the same pdf_standard_failed reasons warm as cold (QUIRE_WARM_VALIDATORS=0)', async () => {
    await ready(warm);
    const before = await counts(warm);
    const latex = TRANSPARENT(++n);
    const res = await compile(warm, warmKey, latex);
    assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
    assert.equal(res.json().error, 'pdf_standard_failed');
    assert.equal((await counts(warm)).warm, before.warm + 1);

    const coldBefore = await counts(cold);
    const reasons = await coldReasons(latex);
    assert.deepEqual(res.json().reasons, reasons);
    assert.ok(reasons.includes(TRANSPARENCY_REASON), reasons.join('\n'));
    // Turned off: cold every time, and no validator is ever started.
    assert.deepEqual(await counts(cold), { ...coldBefore, cold: coldBefore.cold + 1 });
    assert.equal(await metric(cold, 'quire_pdfa_validators_started_total'), 0);
  });

  test('a validator killed before use leaves the job to the cold path, with the right verdict', async () => {
    await ready(warm);
    const before = await counts(warm);
    // The account's kept JVM and the fresh one.
    const javas = await validatorJavas();
    assert.equal(javas.length, 2);
    for (const java of javas) process.kill(java, 'SIGKILL');
    await until('the dead validator to be dropped', async () => (await metric(warm, 'quire_pdfa_validators_ready')) === 0);
    const latex = TRANSPARENT(++n);
    const res = await compile(warm, warmKey, latex);
    assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
    assert.deepEqual(res.json().reasons, await coldReasons(latex));
    const after = await counts(warm);
    assert.equal(after.warm, before.warm);
    assert.equal(after.cold, before.cold + 1);
    assert.equal(after.failed, before.failed + 1);
    // The job started the next one.
    await ready(warm);
  });

  test('a JVM serves one scope only: kept for its next job, never handed to another scope', async () => {
    const validators = new WarmValidators({ count: 1, workRoot: join(tmpdir(), 'quire-jobs'), isolate: true, root: defaultImageRoot(), uid: (i) => sandboxUid(validatorUid(i)) });
    try {
      const sample = await preflightSample(true);
      const serve = (scope?: string) => validators.serve(async () => sample, performance.now() + 30_000, undefined, scope);
      validators.refill();
      await until('a ready validator', () => validators.stats.ready === 1);
      assert.deepEqual(await serve('account:1'), { code: 0, output: 'VALID\n' });
      assert.deepEqual(validators.keptScopes(), ['account:1']);
      // Another scope finds no fresh one waiting (none was refilled): it gets nothing, not account 1's.
      assert.equal(await serve('account:2'), null);
      assert.deepEqual(await serve('account:1'), { code: 0, output: 'VALID\n' }, 'the same JVM, a second PDF');
      assert.deepEqual(await serve('account:1'), { code: 0, output: 'VALID\n' });
      assert.equal(validators.stats.started, 1, 'three answers from one JVM');
      // A job without a scope ends the JVM it took.
      validators.refill();
      await until('a ready validator', () => validators.stats.ready === 1);
      const fresh = validators.pids();
      assert.deepEqual(await serve(), { code: 0, output: 'VALID\n' });
      assert.deepEqual(validators.keptScopes(), ['account:1']);
      await until('the unscoped JVM to end', async () => (await validatorJavas(fresh)).length === 0);
    } finally {
      await validators.close();
    }
  });

  test('a validator that dies while it holds the PDF gives no verdict: the caller runs Preflight cold', async () => {
    const validators = new WarmValidators({ count: 1, workRoot: join(tmpdir(), 'quire-jobs'), isolate: true, root: defaultImageRoot(), uid: (i) => sandboxUid(validatorUid(i)) });
    try {
      const sample = await preflightSample(true);
      validators.refill();
      await until('a ready validator', () => validators.stats.ready === 1);
      const valid = await validators.serve(async () => sample, performance.now() + 30_000);
      assert.deepEqual(valid, { code: 0, output: 'VALID\n' });

      validators.refill();
      await until('a ready validator', () => validators.stats.ready === 1);
      const [java] = await validatorJavas(validators.pids());
      assert.ok(java);
      // Killed after it is taken (serve takes it before it awaits anything), before it answers.
      const answer = validators.serve(async () => {
        process.kill(java, 'SIGKILL');
        await until('the JVM to die', async () => !(await validatorJavas()).includes(java));
        return sample;
      }, performance.now() + 30_000);
      assert.equal(await answer, null);
      assert.equal(validators.stats.failed, 1);
      assert.equal(validators.stats.ready, 0);
    } finally {
      await validators.close();
    }
  });
});
