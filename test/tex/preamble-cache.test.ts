// The preamble cache's policy (preamble-cache.ts) around a stand-in runner: which jobs pass
// straight through, when a format is built and kept, when a run with a format is trusted
// and when it runs again cold (and the format goes), and that a build waits for a quiet
// machine and stops with the cache. TeX itself is not what is tested here: the runner is
// scripted (a real TeX run and build take seconds); test/tex/preamble.test.ts runs real TeX
// through the same wrapper.
import assert from 'node:assert/strict';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { BuildOutcome } from '../../src/tex/caches/format-build.js';
import { FormatCache, type FormatEntry } from '../../src/tex/caches/format-cache.js';
import { COLD, type JobStart } from '../../src/tex/caches/job-start.js';
import { SandboxPool } from '../../src/tex/sandbox/pool.js';
import type { TexJob, TexResult } from '../../src/tex/job.js';
import { preambleKey, texliveIdentity } from '../../src/tex/caches/preamble.js';
import { PreambleCache, type FormatRunner } from '../../src/tex/caches/preamble-cache.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const UID = 4242;
const PREAMBLE = '\\documentclass{article}\n\\usepackage{amsmath}\n';
const doc = (body: string, preamble = PREAMBLE) => `${preamble}\\begin{document}\n${body}\n\\end{document}\n`;
const job = (source: string, extra: Partial<TexJob> = {}): TexJob => ({
  source,
  compiler: 'pdflatex',
  timeoutMs: 20_000,
  maxFileBytes: 1 << 20,
  preamble: { scope: 'account:1', day: '2026-11-23' },
  ...extra,
});
const ok: TexResult = { outcome: 'ok', pdf: Buffer.from('%PDF-'), pages: 1, totalPages: 1, log: '', passes: 1, durationMs: 5 };
const failed = (log: string): TexResult => ({ outcome: 'failed', log, passes: 1, durationMs: 5 });
const entry = (fmt = 'format'): FormatEntry => ({ fmt: Buffer.from(fmt), present: new Set() });

interface Call {
  job: TexJob;
  uid: number | undefined;
  format: Buffer | undefined;
}

/** A runner that answers from a script and records every run and build. */
class ScriptedRunner implements FormatRunner {
  readonly runs: Call[] = [];
  readonly builds: Array<{ uid: number | undefined; signal: AbortSignal }> = [];
  /** Answers runs in order (the last one repeats); an Error is thrown. */
  answers: Array<TexResult | Error | Promise<TexResult>> = [ok];
  build: (signal: AbortSignal) => Promise<BuildOutcome> = async () => ({ entry: entry() });
  started = 0;
  closed = 0;

  /** A real pool, never started: the scripted build below stands in for its sandboxes. */
  readonly pool = new SandboxPool({ workRoot: join(tmpdir(), 'quire-scripted'), isolate: false, root: undefined });

  async run(job: TexJob, uid?: number, start: JobStart = COLD): Promise<TexResult> {
    this.runs.push({ job, uid, format: 'format' in start ? start.format.fmt : undefined });
    const answer = this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!;
    if (answer instanceof Error) throw answer;
    return answer;
  }

  isolated<T>(_pool: unknown, _job: TexJob, uid: number | undefined, _limits: unknown, _disk: number, signal: AbortSignal, _work: unknown): Promise<T> {
    this.builds.push({ uid, signal });
    return this.build(signal) as Promise<T>;
  }

  async start(): Promise<string[]> {
    this.started++;
    return ['swept'];
  }

  async close(): Promise<void> {
    this.closed++;
  }
}

function setup(maxBytes = 1 << 30) {
  const runner = new ScriptedRunner();
  const formats = new FormatCache(maxBytes);
  const reports: Array<{ admitted: boolean; reason?: string }> = [];
  const cache = new PreambleCache(runner, { root: defaultImageRoot(), formats, onFormatBuild: (report) => reports.push(report), buildSandbox: (...args) => runner.isolated(...args) });
  /** Runs the job, then waits for a build it may have started. */
  const run = async (j: TexJob) => {
    const result = await cache.run(j, UID);
    await cache.formatsIdle();
    return result;
  };
  return { runner, formats, reports, cache, run };
}

describe('preamble cache', () => {
  test('jobs the cache cannot serve pass straight through, and start no build', async () => {
    const { runner, formats, run } = setup();
    const { preamble: _, ...unscoped } = job(doc('x'));
    const passing = [
      job(doc('x'), { compiler: 'xelatex' }),
      unscoped,
      job('\\documentclass{article}\\begin{document}x\\end{document}'),
      job(doc('x', `${PREAMBLE}\\catcode\`\\@=11\n`)),
    ];
    for (const j of passing) assert.equal(await run(j), ok);
    assert.deepEqual(
      runner.runs.map((call) => [call.job, call.uid, call.format]),
      passing.map((j) => [j, UID, undefined]),
    );
    assert.equal(runner.builds.length, 0);
    assert.deepEqual(formats.stats, { hits: 0, primed: 0, misses: 0, builds: 0, rejections: 0, evictions: 0 });

    const off = setup(0);
    await off.run(job(doc('x')));
    assert.equal(off.runner.builds.length, 0, 'a cache with no bytes builds nothing');
  });

  test('a delivered job has its format built as the same uid; the next job with that preamble runs with it', async () => {
    const { runner, formats, reports, run } = setup();
    assert.equal(await run(job(doc('first'))), ok);
    assert.deepEqual(reports, [{ admitted: true }]);
    assert.deepEqual(runner.builds.map((b) => b.uid), [UID]);

    const second = job(doc('second, another body'));
    assert.equal(await run(second), ok);
    assert.deepEqual(runner.runs.at(-1), { job: second, uid: UID, format: Buffer.from('format') });
    assert.equal(runner.builds.length, 1, 'a kept format is not built again');
    assert.deepEqual(formats.stats, { hits: 1, primed: 0, misses: 1, builds: 1, rejections: 0, evictions: 0 });

    // Another scope, or another day, never sees it.
    await run(job(doc('third'), { preamble: { scope: 'account:2', day: '2026-11-23' } }));
    await run(job(doc('fourth'), { preamble: { scope: 'account:1', day: '2026-11-24' } }));
    assert.deepEqual(runner.runs.slice(-2).map((call) => call.format), [undefined, undefined]);
  });

  test('a job that did not deliver starts no build; a rejected build is not tried again', async () => {
    const { runner, formats, reports, run } = setup();
    runner.answers = [failed('./main.tex:4: Undefined control sequence.')];
    await run(job(doc('\\broken')));
    assert.equal(runner.builds.length, 0);

    runner.answers = [ok];
    runner.build = async () => ({ rejected: 'the pages differ from a cold compile' });
    await run(job(doc('fine')));
    assert.deepEqual(reports, [{ admitted: false, reason: 'the pages differ from a cold compile' }]);
    await run(job(doc('fine again')));
    assert.equal(runner.builds.length, 1);
    assert.equal(formats.stats.rejections, 1);

    runner.build = async () => {
      throw new Error('the build filled its workspace');
    };
    await run(job(doc('other'), { preamble: { scope: 'account:3', day: '2026-11-23' } }));
    assert.deepEqual(reports.at(-1), { admitted: false, reason: 'the build filled its workspace' });
  });

  test('an error on a body line with the format is trusted; one in the preamble runs again cold and the format goes', async () => {
    const { runner, formats, run } = setup();
    await run(job(doc('warm-up')));
    const lines = PREAMBLE.split('\n').length - 1;

    const bodyError = failed(`./main.tex:${lines + 2}: Undefined control sequence.`);
    runner.answers = [bodyError];
    assert.equal(await run(job(doc('a\n\\broken'))), bodyError);
    assert.equal(runner.runs.at(-1)!.format?.toString(), 'format', 'no cold run after it');

    runner.answers = [failed(`./main.tex:${lines}: Undefined control sequence.`), ok];
    const before = runner.runs.length;
    const result = await run(job(doc('b'), { timeoutMs: 10_000 }));
    assert.equal(result.outcome, 'ok');
    const [withFormat, cold] = runner.runs.slice(before);
    assert.ok(withFormat!.format && !cold!.format);
    assert.ok(cold!.job.timeoutMs <= 10_000 && cold!.job.timeoutMs >= 1000, 'the cold run gets what is left of the time');
    assert.equal(formats.size, 0, 'the format that failed where a cold run delivered is gone');
    assert.equal(formats.stats.rejections, 1);
    await run(job(doc('c')));
    assert.equal(runner.builds.length, 1, 'and is not built again');
  });

  test('a run with the format that throws runs again cold, and the format goes', async () => {
    const { runner, formats, run } = setup();
    await run(job(doc('warm-up')));
    runner.answers = [new Error('TeX did not start'), failed('./main.tex:9: Undefined control sequence.')];
    const result = await run(job(doc('x')));
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(runner.runs.slice(-2).map((call) => call.format === undefined), [false, true]);
    assert.equal(formats.size, 0);
  });

  test('no build while every core has a job', async () => {
    const { runner, cache, run } = setup();
    let release!: (result: TexResult) => void;
    const held = new Promise<TexResult>((resolve) => (release = resolve));
    runner.answers = [...Array.from({ length: availableParallelism() }, () => held), ok];
    const busy = Array.from({ length: availableParallelism() }, (_, i) => cache.run(job(doc(`busy ${i}`), { compiler: 'xelatex' }), UID));
    await run(job(doc('delivered while busy')));
    assert.equal(runner.builds.length, 0);
    release(ok);
    await Promise.all(busy);
    await run(job(doc('delivered when quiet')));
    assert.equal(runner.builds.length, 1);
  });

  test('start and close reach the runner; close stops the build under way and keeps nothing', { timeout: 10_000 }, async () => {
    const { runner, formats, reports, cache } = setup();
    assert.deepEqual(await cache.start(), ['swept']);
    runner.build = (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('killed'))));
    await cache.run(job(doc('x')), UID);
    assert.equal(runner.builds.length, 1);
    await cache.close();
    assert.ok(runner.builds[0]!.signal.aborted);
    assert.equal(runner.closed, 1);
    assert.deepEqual(reports, [{ admitted: false, reason: 'killed' }]);
    assert.equal(formats.size, 0);
    // A shutdown's kill is no verdict on the preamble: it may be built again after a restart.
    const key = preambleKey({ scope: 'account:1', day: '2026-11-23', engine: 'pdflatex', preamble: PREAMBLE, texlive: (await texliveIdentity(defaultImageRoot())).id });
    assert.equal(formats.isRefused(key), false);
  });

  describe('tagged jobs (issue 40)', () => {
    const ua2 = { pdfStandard: undefined, tagging: { ua: 'ua-2' as const, lang: 'de-DE', pdfVersion: '2.0' as const }, metadata: { title: 'Invoice' } };
    const ua1 = { pdfStandard: 'a-2b' as const, tagging: { ua: 'ua-1' as const, lang: 'de-DE', pdfVersion: '1.7' as const }, metadata: { title: 'Invoice' } };
    const report = (violations: string[]) => ({ standards: ['ua-2'], checks: [], violations, validators: [] });
    const clean: TexResult = { ...ok, conformance: report([]) };

    test('a tagged job is served by the format of its own preamble: the \\DocumentMetadata line and metadata are in the key', async () => {
      const { runner, formats, run } = setup();
      runner.answers = [clean];
      await run(job(doc('first'), { output: ua2 }));
      assert.equal(runner.builds.length, 1, 'a delivered tagged job has its format built');
      await run(job(doc('second'), { output: ua2 }));
      assert.equal(runner.runs.at(-1)!.format?.toString(), 'format');
      // Another standard, another title, or no tagging: never the ua-2 format.
      await run(job(doc('third'), { output: ua1 }));
      await run(job(doc('fourth'), { output: { ...ua2, metadata: { title: 'Other' } } }));
      await run(job(doc('fifth')));
      assert.deepEqual(runner.runs.slice(-3).map((call) => call.format), [undefined, undefined, undefined]);
      assert.equal(formats.stats.hits, 1);
      // PDF/A by pdfx and attachments still run without a format, and start no build.
      const builds = runner.builds.length;
      await run(job(doc('pdfx'), { output: { pdfStandard: 'a-2b' } }));
      await run(job(doc('attached'), { output: { ...ua2, attachments: [{ name: 'a.xml', data: Buffer.from('<a/>'), relationship: 'Data', mimeType: 'text/xml' }] } }));
      assert.deepEqual(runner.runs.slice(-2).map((call) => call.format), [undefined, undefined]);
      assert.equal(runner.builds.length, builds);
    });

    test('a tagged run with the format whose report has a violation runs again cold: the cold answer is delivered; the format goes when the cold report differs', async () => {
      const { runner, formats, run } = setup();
      runner.answers = [clean];
      await run(job(doc('warm-up'), { output: ua2 }));
      assert.equal(formats.size, 1);

      // The document's own fault: the cold run says the same, the format stays.
      const own = { ...ok, conformance: report(['figures_alt: 1 of 1 figure(s) have no /Alt']) };
      runner.answers = [own, own];
      let before = runner.runs.length;
      assert.deepEqual((await run(job(doc('\\includegraphics{x}'), { output: ua2 }))).conformance, own.conformance);
      assert.deepEqual(runner.runs.slice(before).map((call) => call.format !== undefined), [true, false]);
      assert.equal(formats.size, 1, 'a report the cold run repeats keeps the format');

      // The format's fault: the cold run has a clean report, which is the one delivered.
      runner.answers = [{ ...ok, conformance: report(['pages_struct_parents: page(s) 1 have no /StructParents']) }, clean];
      before = runner.runs.length;
      const result = await run(job(doc('body'), { output: ua2 }));
      assert.deepEqual(result.conformance, clean.conformance);
      assert.deepEqual(runner.runs.slice(before).map((call) => call.format !== undefined), [true, false]);
      assert.equal(formats.size, 0, 'the format whose structure a cold run contradicts is gone');
      assert.equal(formats.stats.rejections, 1);
      runner.answers = [clean];
      await run(job(doc('again'), { output: ua2 }));
      assert.equal(runner.builds.length, 1, 'and is not built again');
    });
  });
});

