// Compiles every broken document of test/fixtures/broken for real and scores the diagnosis
// against its label; then applies each package fix the way an agent would and recompiles.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { texIndexDir } from '../../src/config.js';
import { ensureCatalog } from '../../src/tex/diagnosis/catalog.js';
import { analyzeLog, missingCharacters, type Diagnosis } from '../../src/tex/diagnosis/index.js';
import type { TexResult } from '../../src/tex/job.js';
import type { TexRunner } from '../../src/tex/runner.js';
import { applyFix, compile, corpusRunner, loadCorpus, pool } from './corpus.js';

const corpus = loadCorpus();

interface Outcome {
  file: string;
  result: TexResult;
  diagnosis?: Diagnosis;
  line?: number;
}

describe('diagnosis corpus (real TeX)', () => {
  let runner: TexRunner;
  let outcomes: Outcome[] = [];

  before(async () => {
    // The TeX Live index (built or read from its cache), so package suggestions do not depend on timing.
    await ensureCatalog(texIndexDir());
    runner = await corpusRunner();
    outcomes = await pool(corpus, 2, async (c) => {
      const result = await compile(runner, c.source, c.engine);
      if (c.check === 'missingCharacters') {
        const diagnosis = missingCharacters(result.log, c.engine, { source: c.source });
        return { file: c.file, result, diagnosis, line: diagnosis?.line };
      }
      const analysis = analyzeLog(result.log, c.engine, { source: c.source });
      return { file: c.file, result, diagnosis: analysis.diagnosis, line: analysis.line };
    });
  });

  after(async () => {
    outcomes = [];
    await runner.close();
  });

  it('has at least 80 documents, 10+ for xelatex and for lualatex', () => {
    assert.ok(corpus.length >= 80, `${corpus.length} documents`);
    assert.ok(corpus.filter((c) => c.engine === 'xelatex').length >= 10);
    assert.ok(corpus.filter((c) => c.engine === 'lualatex').length >= 10);
  });

  it('classifies at least 95% right and names at least 90% of symbols, packages and lines', () => {
    let classOk = 0;
    let symbolOk = 0;
    let packageOk = 0;
    let lineOk = 0;
    const misses: string[] = [];
    corpus.forEach((c, i) => {
      const o = outcomes[i] as Outcome;
      const d = o.diagnosis;
      const expectFail = c.check !== 'missingCharacters';
      if (o.result.outcome !== (expectFail ? 'failed' : 'ok')) misses.push(`${c.file}: compile outcome ${o.result.outcome}`);
      const got = {
        class: d?.error_class ?? null,
        symbol: d?.symbol ?? null,
        package: d?.suggested_package ?? null,
        line: c.class === null ? c.line : (o.line ?? null),
      };
      const ok = {
        class: got.class === c.class,
        symbol: c.class === null || got.symbol === c.symbol,
        package: got.package === c.package,
        line: c.line === null || got.line === c.line,
      };
      classOk += Number(ok.class);
      symbolOk += Number(ok.symbol);
      packageOk += Number(ok.package);
      lineOk += Number(ok.line);
      if (!ok.class || !ok.symbol || !ok.package || !ok.line) {
        misses.push(`${c.file}: expected ${JSON.stringify({ class: c.class, symbol: c.symbol, package: c.package, line: c.line })} got ${JSON.stringify(got)}`);
      }
    });
    const pct = (n: number) => ((100 * n) / corpus.length).toFixed(1);
    console.log(
      `diagnosis corpus: ${corpus.length} documents; class ${pct(classOk)}%, symbol ${pct(symbolOk)}%, ` +
        `package ${pct(packageOk)}%, line ${pct(lineOk)}%`,
    );
    for (const miss of misses) console.log(`  miss ${miss}`);
    assert.ok(classOk / corpus.length >= 0.95, `class ${pct(classOk)}%`);
    assert.ok(symbolOk / corpus.length >= 0.9, `symbol ${pct(symbolOk)}%`);
    assert.ok(packageOk / corpus.length >= 0.9, `package ${pct(packageOk)}%`);
    assert.ok(lineOk / corpus.length >= 0.9, `line ${pct(lineOk)}%`);
  });

  it('every diagnosis is complete: summary, fix, line, and an agent hint of one sentence', () => {
    corpus.forEach((c, i) => {
      const d = (outcomes[i] as Outcome).diagnosis;
      if (!d) return;
      assert.ok(d.summary.length > 10 && d.suggested_fix.length > 10, c.file);
      assert.equal(typeof d.retryable, 'boolean', c.file);
      assert.ok(d.line === undefined || Number.isInteger(d.line), c.file);
    });
  });

  it('fix loop: applying each suggested package fix compiles, or gets past the first error', async () => {
    const fixable = corpus
      .map((c, i) => ({ c, o: outcomes[i] as Outcome }))
      .filter(({ o }) => o.diagnosis?.suggested_package !== undefined);
    assert.ok(fixable.length >= 30, `${fixable.length} cases name a package`);
    const results = await pool(fixable, 2, async ({ c, o }) => {
      const fixed = applyFix(c.source, c.engine, o.diagnosis as Diagnosis);
      const result = await compile(runner, fixed.source, fixed.engine);
      const again = result.outcome === 'ok' ? undefined : analyzeLog(result.log, fixed.engine, { source: fixed.source });
      return { c, before: o, result, again };
    });
    const stuck: string[] = [];
    const further: string[] = [];
    let compiled = 0;
    for (const { c, before, result, again } of results) {
      if (result.outcome === 'ok') {
        compiled++;
        continue;
      }
      const sameError = again?.diagnosis?.error_class === before.diagnosis?.error_class && again?.diagnosis?.symbol === before.diagnosis?.symbol;
      const now = `${again?.diagnosis?.error_class ?? 'unclassified'} ${again?.diagnosis?.symbol ?? ''} line ${again?.line} (${again?.message})`;
      if (sameError) stuck.push(`${c.file}: still ${now}`);
      else further.push(`${c.file}: now ${now}`);
    }
    console.log(`fix loop: ${results.length} package fixes applied; ${compiled} compile, ${results.length - compiled - stuck.length} get further, ${stuck.length} stuck`);
    for (const s of stuck) console.log(`  stuck ${s}`);
    for (const f of further) console.log(`  further ${f}`);
    assert.deepEqual(stuck, []);
  });
});
