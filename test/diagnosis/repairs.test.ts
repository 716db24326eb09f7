// Package suggestions that do not depend on the machine's load (issue 24): the misses the
// issue names are named (real TeX in the sandbox, diagnosed as the service does, with a probe
// port), each with how sure it is; a spent probe budget still names the best candidate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { ProbeRefused, WindowProbeBudget } from '../../src/compile/probe-budget.js';
import { texIndexDir } from '../../src/config.js';
import type { Compiler } from '../../src/quota/plans.js';
import { ensureCatalog } from '../../src/tex/diagnosis/catalog.js';
import { diagnose, type LogAnalysis } from '../../src/tex/diagnosis/index.js';
import type { ProbeCompile } from '../../src/tex/diagnosis/probe.js';
import type { TexRunner } from '../../src/tex/runner.js';
import { applyFix, compile, corpusRunner } from './corpus.js';

describe('repairs that do not flake (real TeX)', () => {
  let runner: TexRunner;
  let probes = 0;
  before(async () => {
    await ensureCatalog(texIndexDir());
    runner = await corpusRunner();
  });
  after(() => runner.close());

  /** The service's port: probes under a probe budget, bounded by CPU seconds. */
  const port = (budget: WindowProbeBudget, caller = 'caller'): ProbeCompile => (source, compiler) =>
    budget.run(caller, ({ cpuSeconds }) => {
      probes++;
      return runner.run({ source, compiler, timeoutMs: 30_000, cpuSeconds, maxFileBytes: 16 * 1024 * 1024 });
    });
  const roomy = () => new WindowProbeBudget({ perCallerPerMinute: 6, cpuSecondsPerProbe: 3, reserveCpuSecondsPerMinute: 60 }, new ManualClock());

  async function diagnosed(source: string, engine: Compiler = 'pdflatex', budget = roomy()): Promise<LogAnalysis> {
    const result = await compile(runner, source, engine);
    assert.equal(result.outcome, 'failed', result.log.slice(-800));
    return diagnose(result.log, engine, { source, probe: port(budget) });
  }

  /** The suggestion applied the way an agent would makes the document compile. */
  async function repairs(source: string, engine: Compiler, a: LogAnalysis): Promise<void> {
    assert.ok(a.diagnosis);
    const fixed = applyFix(source, engine, a.diagnosis);
    assert.equal(fixed.engine, engine, 'no compiler switch');
    const again = await compile(runner, fixed.source, fixed.engine);
    assert.equal(again.outcome, 'ok', again.log.slice(-800));
  }

  it('\\url without url: url, without a probe', async () => {
    probes = 0;
    const a = await diagnosed('\\documentclass{article}\n\\begin{document}\nSee \\url{https://example.org/a_b}.\n\\end{document}\n');
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.confidence, a.diagnosis?.line], ['undefined_command', '\\url', 'url', 'certain', 3]);
    assert.equal(probes, 0);
  });

  it('issue 39: \\pagestyle{fancy} without fancyhdr (LaTeX reports \\undefinedpagestyle) names fancyhdr, and adding it repairs the document', async () => {
    const source = '\\documentclass{article}\n\\pagestyle{fancy}\n\\fancyhf{}\n\\begin{document}\nText.\n\\end{document}\n';
    const a = await diagnosed(source);
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.line], ['undefined_command', '\\undefinedpagestyle', 'fancyhdr', 2]);
    await repairs(source, 'pdflatex', a);
  });

  it('issue 39: a KOMA-Script class without scrlayer-scrpage (which the class only loads on request): \\clearpairofpagestyles names it, verified by a probe', async () => {
    probes = 0;
    const source = '\\documentclass{scrartcl}\n\\clearpairofpagestyles\n\\begin{document}\nText.\n\\end{document}\n';
    const a = await diagnosed(source);
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.confidence, a.diagnosis?.line], ['undefined_command', '\\clearpairofpagestyles', 'scrlayer-scrpage', 'verified', 2]);
    assert.equal(probes, 1);
    await repairs(source, 'pdflatex', a);
  });

  it('\\makeindex without makeidx: \\printindex names makeidx, and adding it repairs the document', async () => {
    const source = '\\documentclass{article}\n\\makeindex\n\\begin{document}\nWord\\index{word}.\n\\printindex\n\\end{document}\n';
    const a = await diagnosed(source);
    assert.deepEqual([a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.confidence], ['\\printindex', 'makeidx', 'certain']);
    await repairs(source, 'pdflatex', a);
  });

  it('a deleted babel: LaTeX\'s "Not loaded." (2025: "No multilingual package has been loaded.") stub of \\selectlanguage names babel', async () => {
    const source = '\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\n\\selectlanguage{ngerman}\nHallo.\n\\end{document}\n';
    const a = await diagnosed(source);
    // LaTeX's words changed in 2025; either names the stub.
    assert.match(a.message ?? '', /^(Not loaded|No multilingual package has been loaded)\.$/);
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.line], ['undefined_command', '\\selectlanguage', 'babel', 4]);
  });

  for (const engine of ['xelatex', 'lualatex'] as const) {
    it(`glossaries-extra under ${engine}: named for that engine, no compiler switch, repairs the document`, async () => {
      const source =
        '\\documentclass{article}\n\\setabbreviationstyle{long-short}\n\\newabbreviation{html}{HTML}{hypertext markup language}\n\\begin{document}\n\\gls{html}\n\\printunsrtglossaries\n\\end{document}\n';
      const a = await diagnosed(source, engine);
      assert.deepEqual([a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.confidence, a.diagnosis?.line], ['\\setabbreviationstyle', 'glossaries-extra', 'certain', 2]);
      assert.doesNotMatch(a.diagnosis?.suggested_fix ?? '', /compiler/);
      await repairs(source, engine, a);
    });
  }

  it('multibib: \\newcites in the preamble names multibib', async () => {
    const a = await diagnosed('\\documentclass{article}\n\\newcites{sec}{Secondary}\n\\begin{document}\nText.\n\\end{document}\n');
    assert.deepEqual([a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.line], ['\\newcites', 'multibib', 2]);
  });

  const bibliography = (style: string) =>
    `\\documentclass{article}\n\\begin{filecontents*}[overwrite]{refs.bib}\n@book{k, author={Ann Author}, title={A Title}, publisher={P}, year={2020}, url={https://example.org/x}}\n\\end{filecontents*}\n\\begin{document}\nSee \\cite{k}.\n\\bibliographystyle{${style}}\n\\bibliography{refs}\n\\end{document}\n`;

  it('a command in the generated .bbl maps to its package: \\url of plainurl → url', async () => {
    const source = bibliography('plainurl');
    const a = await diagnosed(source);
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package], ['undefined_command', '\\url', 'url']);
    await repairs(source, 'pdflatex', a);
  });

  it("jurabib: its style's commands in the .bbl name jurabib", async () => {
    const a = await diagnosed(bibliography('jurabib'));
    assert.equal(a.diagnosis?.error_class, 'undefined_command');
    assert.equal(a.diagnosis?.suggested_package, 'jurabib');
    assert.match(a.diagnosis?.symbol ?? '', /^\\(jb|bibAnnote)/);
  });

  it('a spent probe budget: the best-ranked candidate, unverified, and no probe runs', async () => {
    // \dddot: amsmath, mathdots, accents and amstex define it; only a probe can choose.
    const source = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';
    const budget = roomy();
    probes = 0;
    const verified = await diagnosed(source, 'pdflatex', budget);
    assert.deepEqual([verified.diagnosis?.suggested_package, verified.diagnosis?.confidence], ['amsmath', 'verified']);
    assert.equal(probes, 1);
    const spent = new WindowProbeBudget({ perCallerPerMinute: 0, cpuSecondsPerProbe: 3, reserveCpuSecondsPerMinute: 60 }, new ManualClock());
    await assert.rejects(spent.run('caller', async () => 'ran'), ProbeRefused);
    probes = 0;
    const unverified = await diagnosed(source, 'pdflatex', spent);
    assert.deepEqual([unverified.diagnosis?.suggested_package, unverified.diagnosis?.confidence, unverified.diagnosis?.symbol], ['amsmath', 'unverified', '\\dddot']);
    assert.equal(probes, 0);
    assert.equal('verify' in unverified, false);
  });
});
