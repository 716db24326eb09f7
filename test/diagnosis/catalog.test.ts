// The TeX Live index behind package suggestions: the extractor on real installed packages,
// the ranking of candidates, and the probe compile that confirms a suggestion (real TeX in
// the sandbox).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { texIndexDir, texliveSettings } from '../../src/config.js';
import { buildAndCacheCatalog, ensureCatalog, loadCachedCatalog, type TexCatalog } from '../../src/tex/diagnosis/catalog.js';
import { hostPath, imageToolSync } from '../../src/tex/image/tools.js';
import { rankCandidates } from '../../src/tex/diagnosis/candidates.js';
import { documentsLoading, usageTable, USAGE_MIN_DOCUMENTS } from '../../src/tex/diagnosis/usage.js';
import { servedImages } from '../../src/tex/image/store.js';
import { extractDefinitions } from '../../src/tex/diagnosis/extract.js';
import { analyzeLog, diagnose } from '../../src/tex/diagnosis/index.js';
import { probeDocument, verifyCandidates, type ProbeCompile } from '../../src/tex/diagnosis/probe.js';
import type { TexRunner } from '../../src/tex/runner.js';
import { compile, corpusRunner } from './corpus.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

/** A probe port whose budget is spent. */
const refuse: ProbeCompile = () => Promise.reject(new Error('probe budget spent'));

const readImageVersion = () => servedImages({ sandbox: true, texlive: texliveSettings() }).find((i) => i.year === '2026')?.texliveVersion ?? 'no 2026 image';

const installed = (file: string) => readFileSync(hostPath(imageToolSync(['kpsewhich', file], defaultImageRoot()).trim(), defaultImageRoot()), 'latin1');

describe('definition extractor on installed packages', () => {
  it('reads \\ams@newcommand, \\newcommand, \\def and \\NewDocumentCommand definitions', () => {
    assert.equal(extractDefinitions(installed('amsmath.sty')).commands.get('dddot'), true);
    assert.equal(extractDefinitions(installed('makeidx.sty')).commands.get('printindex'), true);
    assert.equal(extractDefinitions(installed('babel.sty')).commands.get('useshorthands'), true);
    assert.equal(extractDefinitions(installed('kantlipsum.sty')).commands.get('kant'), true);
    assert.equal(extractDefinitions(installed('multibib.sty')).commands.get('newcites'), true);
    assert.equal(extractDefinitions(installed('scrlayer-notecolumn.sty')).commands.get('makenote'), true);
    assert.ok(extractDefinitions(installed('bibtopic.sty')).environments.has('btSect'));
    assert.deepEqual(extractDefinitions(installed('amsmath.sty')).requires, ['amstext', 'amsbsy', 'amsopn']);
  });

  it('marks definitions inside braces as unsure, skips internals, \\let\\x\\relax and comments', () => {
    const d = extractDefinitions(
      [
        '\\newcommand{\\alpha@internal}{}',
        '\\newcommand*\\Top[1]{#1}',
        '\\AtBeginDocument{\\def\\Late{x}}',
        '\\let\\Placeholder\\relax',
        '% \\newcommand\\Commented{}',
        '\\newif\\ifdraftmode',
        '\\newcounter{step}',
        '\\def\\boxed@x{}\\def\\panel{\\begingroup}\\def\\endpanel{\\endgroup}',
        '\\NewDocumentEnvironment{Card}{m}{}{}',
        '\\cs_new_protected:Npn \\__mod_x:n #1 {}',
      ].join('\n'),
    );
    assert.deepEqual([...d.commands].sort(), [
      ['Late', false], ['Top', true], ['draftmodefalse', true], ['draftmodetrue', true], ['endpanel', true], ['ifdraftmode', true], ['panel', true], ['thestep', true],
    ]);
    assert.deepEqual([...d.environments].sort(), [['Card', true], ['panel', true]]);
  });
});

describe('TeX Live index', () => {
  let cat: TexCatalog;
  before(async () => {
    const loaded = await ensureCatalog(texIndexDir());
    assert.ok(loaded, 'the index builds from the installed TeX Live');
    cat = loaded;
  });

  it('maps the names of real documents to their packages, helpers included', () => {
    const has = (name: string, kind: 'command' | 'environment', pkg: string) =>
      assert.ok(cat.definers(name, kind).some((d) => d.package === pkg), `${name} → ${pkg}: ${JSON.stringify(cat.definers(name, kind))}`);
    has('dddot', 'command', 'amsmath');
    has('printindex', 'command', 'makeidx');
    has('useshorthands', 'command', 'babel');
    has('glsxtrshort', 'command', 'glossaries-extra');
    has('Paragraph', 'command', 'scrjura');
    // TeX Live 2026's scrjura is a wrapper over the contract package, which defines it now.
    has('contract', 'environment', cat.has('contract') ? 'contract' : 'scrjura');
    has('makenote', 'command', 'scrlayer-notecolumn');
    has('TrackLanguageTag', 'command', 'tracklang'); // defined in tracklang.tex, which tracklang.sty inputs
    has('kant', 'command', 'kantlipsum');
    has('btSect', 'environment', 'bibtopic');
    has('newcites', 'command', 'multibib');
    assert.ok(cat.inKernel('textbf', 'command') && cat.inKernel('itemize', 'environment'));
    assert.ok(cat.provides('mathtools', 'dddot', 'command'), 'through amsmath, which mathtools loads');
    assert.deepEqual(cat.engines('fontspec'), ['xelatex', 'lualatex']);
    assert.deepEqual(cat.engines('luacode'), ['lualatex']);
    assert.equal(cat.engines('amsmath'), undefined);
  });

  it('ranks the core package first, then the one that covers the document, then the engine', () => {
    const top = (name: string, kind: 'command' | 'environment', source?: string, engine: 'pdflatex' | 'xelatex' = 'pdflatex') =>
      rankCandidates(cat, name, kind, { engine, ...(source ? { source } : {}) })[0]?.package;
    assert.equal(top('dddot', 'command'), 'amsmath');
    assert.equal(top('printindex', 'command'), 'makeidx');
    assert.equal(top('glsxtrshort', 'command'), 'glossaries-extra');
    assert.equal(top('kant', 'command'), 'kantlipsum');
    // The document also uses \coloneqq: mathtools defines both (with amsmath), so it wins.
    const doc = '\\documentclass{article}\n\\begin{document}\n$\\dddot{x} \\coloneqq y$\n\\end{document}\n';
    assert.equal(top('dddot', 'command', doc), 'mathtools');
    // scrlayer-notecolumn over a look-alike when the document is a KOMA-Script one.
    assert.equal(top('makenote', 'command', '\\documentclass{scrartcl}\n\\begin{document}\n\\makenote{x}\n\\end{document}\n'), 'scrlayer-notecolumn');
  });

  it('ranks the package real documents load for a name first among packages that define it (the usage table)', () => {
    // Twenty packages define \ch; by the index alone the smallest (frenchmath) came first and,
    // little known, was no suggestion: the achemso demo without chemformula got "define \ch".
    const source = '\\documentclass{article}\n\\begin{document}\nWater is \\ch{H2O}.\n\\end{document}\n';
    const ranked = rankCandidates(cat, 'ch', 'command', { engine: 'pdflatex', source });
    assert.equal(ranked[0]?.package, 'chemformula');
    assert.ok(documentsLoading('chemformula', 'ch', 'command') >= USAGE_MIN_DOCUMENTS);
    // Negative control: the rival the index alone preferred defines \ch too, and no document loads it for that.
    assert.ok(cat.definers('ch', 'command').some((d) => d.package === 'frenchmath'));
    assert.equal(documentsLoading('frenchmath', 'ch', 'command'), 0);
    assert.ok(ranked.some((c) => c.package === 'frenchmath' && c.coverage === ranked[0]?.coverage && cat.bytes('frenchmath') < cat.bytes('chemformula')), 'without the table frenchmath wins on size');
    const a = analyzeLog('./main.tex:3: Undefined control sequence.\nl.3 Water is \\ch\n                {H2O}.\n', 'pdflatex', { source, catalog: cat, probing: true });
    assert.equal(a.diagnosis?.suggested_package, 'chemformula');
    assert.equal(a.verify?.candidates[0], 'chemformula');
  });

  it('reads its usage table from the TeX Live the default image runs, without the documents the diagnosis bench reads', () => {
    const USAGE = usageTable();
    assert.match(USAGE.source, /texlive-latex-extra-doc/);
    assert.ok(USAGE.source.endsWith(readImageVersion()), `${USAGE.source} vs the image's ${readImageVersion()}`);
    assert.ok(USAGE.documents > 1000, `${USAGE.documents} documents`);
    // Real documents load blindtext for \blindtext, not mwe (which loads it).
    assert.ok(documentsLoading('blindtext', 'blindtext', 'command') > 10 * Math.max(1, documentsLoading('mwe', 'blindtext', 'command')));
  });

  it('suggests an index package for a name the table does not know, and none when the document loads its definer', () => {
    const log = './main.tex:3: Undefined control sequence.\nl.3 \\printindex\n           \n';
    const source = '\\documentclass{article}\n\\begin{document}\n\\printindex\n\\end{document}\n';
    const a = analyzeLog(log, 'pdflatex', { source, catalog: cat });
    assert.equal(a.diagnosis?.error_class, 'undefined_command');
    assert.equal(a.diagnosis?.suggested_package, 'makeidx');
    assert.equal(a.diagnosis?.symbol, '\\printindex');
    const loaded = analyzeLog(log, 'pdflatex', { source: source.replace('\\begin{document}', '\\usepackage{makeidx}\n\\begin{document}'), catalog: cat });
    assert.equal(loaded.diagnosis, undefined);
  });

  it('finds misspelt package names among all installed packages', () => {
    const log = "./main.tex:2: LaTeX Error: File `kantlipsm.sty' not found.\n";
    const a = analyzeLog(log, 'pdflatex', { source: '\\documentclass{article}\n\\usepackage{kantlipsm}\n', catalog: cat });
    assert.equal(a.diagnosis?.error_class, 'missing_package');
    assert.equal(a.diagnosis?.suggested_package, 'kantlipsum');
  });
});

describe('index cache', () => {
  it('is keyed by the ls-R databases: a changed TeX Live is re-indexed and the old index removed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quire-texmf-'));
    const cache = mkdtempSync(join(tmpdir(), 'quire-index-'));
    try {
      mkdirSync(join(root, 'tex/latex/demo'), { recursive: true });
      writeFileSync(join(root, 'tex/latex/demo/demo.sty'), '\\NewDocumentCommand\\demo{m}{#1}\n\\RequirePackage{graphicx}\n');
      writeFileSync(join(root, 'ls-R'), '% ls-R -- filename database\n./tex/latex/demo:\ndemo.sty\n');
      assert.equal(loadCachedCatalog(cache, [root]), undefined, 'nothing cached yet');
      const first = await buildAndCacheCatalog(cache, [root]);
      assert.deepEqual(first.definers('demo', 'command'), [{ package: 'demo', sure: true }]);
      assert.equal(loadCachedCatalog(cache, [root])?.fingerprint, first.fingerprint, 'read back from the cache');

      writeFileSync(join(root, 'tex/latex/demo/extra.sty'), '\\newenvironment{extrabox}{}{}\n');
      writeFileSync(join(root, 'ls-R'), '% ls-R -- filename database\n./tex/latex/demo:\ndemo.sty\nextra.sty\n');
      utimesSync(join(root, 'ls-R'), new Date(), new Date(Date.now() + 5000));
      assert.equal(loadCachedCatalog(cache, [root]), undefined, 'mktexlsr changed ls-R: the cached index is stale');
      const second = await buildAndCacheCatalog(cache, [root]);
      assert.notEqual(second.fingerprint, first.fingerprint);
      assert.deepEqual(second.definers('extrabox', 'environment'), [{ package: 'extra', sure: true }]);
      assert.deepEqual(readdirSync(cache), [`texlive-index-${second.fingerprint}.json`]);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe('probe verification (real TeX in the sandbox)', () => {
  let runner: TexRunner;
  let probes = 0;
  const probe: ProbeCompile = async (source, compiler) => {
    probes++;
    return runner.run({ source, compiler, timeoutMs: 30_000, cpuSeconds: 3, maxFileBytes: 16 * 1024 * 1024 });
  };
  before(async () => {
    await ensureCatalog(texIndexDir());
    runner = await corpusRunner();
  });
  after(() => runner.close());

  const source = '\\documentclass{article}\n\\begin{document}\nA cube: $\\dddot{x}$ and\n\\begin{itemize}\n\\item $\\dddot{y}$\n\\end{itemize}\n\\end{document}\n';

  it('builds the probe from the preamble, the package and the failing line inside its environments', () => {
    const doc = probeDocument(source, 'amsmath', 5);
    assert.deepEqual(doc, {
      source: '\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n\\begin{itemize}\n\\item $\\dddot{y}$\n\\end{itemize}\n\\end{document}',
      line: 5,
    });
  });

  it('confirms a candidate that defines the name and rejects one that does not', async () => {
    const v = { kind: 'command' as const, name: 'dddot', line: 3, candidates: ['booktabs', 'amsmath'], needed: true };
    assert.equal(await verifyCandidates(source, 'pdflatex', v, { probe }), 'amsmath');
    assert.equal(await verifyCandidates(source, 'pdflatex', { ...v, candidates: ['booktabs'] }, { probe }), null);
    assert.deepEqual(await verifyCandidates(source, 'pdflatex', v, { probe: refuse }), { failed: [] }, 'no budget, no verdict');
    let left = 1;
    const once: ProbeCompile = (s, c) => (left-- > 0 ? probe(s, c) : refuse(s, c));
    assert.deepEqual(await verifyCandidates(source, 'pdflatex', v, { probe: once }), { failed: ['booktabs'] }, 'the budget ran out after one candidate failed');
  });

  it('diagnose() confirms suggested_package with a probe, and names the best-ranked candidate unverified without one', async () => {
    const result = await compile(runner, source, 'pdflatex');
    assert.equal(result.outcome, 'failed');
    const sync = analyzeLog(result.log, 'pdflatex', { source });
    assert.equal(sync.verify?.needed, true, 'several packages define \\dddot');
    probes = 0;
    const a = await diagnose(result.log, 'pdflatex', { source, probe });
    assert.ok(probes >= 1);
    assert.equal(a.diagnosis?.confidence, 'verified');
    assert.equal(a.diagnosis?.error_class, 'undefined_command');
    assert.equal(a.diagnosis?.symbol, '\\dddot');
    assert.equal(a.diagnosis?.suggested_package, 'amsmath');
    assert.equal(a.line, 3);
    assert.equal('verify' in a, false, 'internal data stays internal');
    const unverified = await diagnose(result.log, 'pdflatex', { source, probe: refuse });
    assert.equal(unverified.diagnosis?.error_class, 'undefined_command');
    assert.equal(unverified.diagnosis?.suggested_package, 'amsmath');
    assert.equal(unverified.diagnosis?.confidence, 'unverified');
    assert.match(unverified.diagnosis?.suggested_fix ?? '', /\\usepackage\{amsmath\}/);
    assert.equal('verify' in unverified, false);
  });
});

describe('a document without \\begin{document}', () => {
  it('is missing_begin_document whatever error the first body command caused', () => {
    const source = '\\documentclass{scrlttr2}\n\\setkomavar{fromname}{A}\n\\begin{letter}{B}\n\\opening{Dear B,}\nText.\n\\end{letter}\n\\end{document}\n';
    const log = './main.tex:4: Undefined control sequence.\n\\phonename ->\nl.4 \\opening{Dear B,}\n';
    const a = analyzeLog(log, 'pdflatex', { source });
    assert.equal(a.diagnosis?.error_class, 'missing_begin_document');
    assert.equal(a.diagnosis?.symbol, '\\begin{document}');
    assert.equal(a.diagnosis?.suggested_fix, 'Add \\begin{document} after the preamble (before line 4).');
  });
});

describe('a loaded package that should define the name (real TeX)', () => {
  let runner: TexRunner;
  before(async () => {
    await ensureCatalog(texIndexDir());
    runner = await corpusRunner();
  });
  after(() => runner.close());

  it('gets no diagnosis without a probe, and the package a probe confirms with one', async () => {
    // mathdots redefines \dddot only when amsmath is loaded: the index cannot be sure, TeX is.
    const source = '\\documentclass{article}\n\\usepackage{mathdots}\n\\begin{document}\n$\\dddot{x}$\n\\end{document}\n';
    const result = await compile(runner, source, 'pdflatex');
    assert.equal(analyzeLog(result.log, 'pdflatex', { source }).diagnosis, undefined);
    const probe: ProbeCompile = (s, compiler) => runner.run({ source: s, compiler, timeoutMs: 30_000, cpuSeconds: 3, maxFileBytes: 16 * 1024 * 1024 });
    assert.equal((await diagnose(result.log, 'pdflatex', { source, probe: refuse })).diagnosis, undefined, 'no verdict: as without probes');
    const a = await diagnose(result.log, 'pdflatex', { source, probe });
    assert.equal(a.diagnosis?.confidence, 'verified');
    assert.equal(a.diagnosis?.suggested_package, 'amsmath');
    assert.equal(a.diagnosis?.line, 4);
  });
});

describe('messages with a diagnosis since issue 19 (real TeX)', () => {
  let runner: TexRunner;
  before(async () => {
    runner = await corpusRunner();
  });
  after(() => runner.close());

  const run = async (source: string) => analyzeLog((await compile(runner, source, 'pdflatex')).log, 'pdflatex', { source });

  it('"Paragraph ended before \\author  was complete": runaway_argument on \\author', async () => {
    const a = await run('\\documentclass{article}\n\\author{Jane\n\nDoe}\n\\begin{document}\nx\n\\end{document}\n');
    assert.equal(a.message, 'Paragraph ended before \\author  was complete.');
    assert.equal(a.diagnosis?.error_class, 'runaway_argument');
    assert.equal(a.diagnosis?.symbol, '\\author');
    assert.equal(a.diagnosis?.line, 2);
  });

  it('"Paragraph ended before \\end  was complete": runaway_argument on \\end', async () => {
    const a = await run('\\documentclass{article}\n\\begin{document}\n\\begin{itemize}\n\\item a\n\\end{itemize\n\nx}\n\\end{document}\n');
    assert.equal(a.diagnosis?.error_class, 'runaway_argument');
    assert.equal(a.diagnosis?.symbol, '\\end');
    assert.equal(a.diagnosis?.line, 5);
  });

  it('"File ended while scanning use of \\textbf.": the symbol has no trailing period', async () => {
    const a = await run('\\documentclass{article}\n\\begin{document}\n\\textbf{abc\n\\end{document}\n');
    assert.match(a.message ?? '', /^File ended while scanning use of \\textbf ?\.$/);
    assert.equal(a.diagnosis?.error_class, 'runaway_argument');
    assert.equal(a.diagnosis?.symbol, '\\textbf');
    // Engines print the name with or without its trailing space; the period never belongs to it.
    const tight = analyzeLog('! File ended while scanning use of \\footnote.\n<inserted text> \n                \\par \n<*> main.tex\n', 'pdflatex');
    assert.equal(tight.diagnosis?.symbol, '\\footnote');
  });

  it('"Keyboard character used is undefined in inputencoding latin1": unsupported_unicode with the real codepoint', async () => {
    const a = await run('\\documentclass{article}\n\\usepackage[latin1]{inputenc}\n\\begin{document}\nCaf\u00e9 costs 3 \u20ac.\n\\end{document}\n');
    assert.equal(a.diagnosis?.error_class, 'unsupported_unicode');
    assert.equal(a.diagnosis?.symbol, 'U+20AC');
    assert.equal(a.diagnosis?.line, 4);
    assert.match(a.diagnosis?.suggested_fix ?? '', /^Change \\usepackage\[latin1\]\{inputenc\} on line 2 to \\usepackage\[utf8\]\{inputenc\}/);
  });
});
