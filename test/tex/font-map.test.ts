// The core font map (font-map.ts): warm pdflatex engines read a tenth of pdftex.map. A document
// in core fonts gets the PDF the whole map gives, byte for byte; one that opens a font only the
// whole map has runs again with it and gets that PDF too. A preamble format's engines read the
// core map when the preamble loaded only core fonts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stable } from './support.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { CORE_MAP, CORE_MAP_FILES, FontMaps } from '../../src/tex/caches/font-map.js';
import { prepareFormats, type Formats } from '../../src/tex/caches/formats.js';
import { hostPath, imageTool } from '../../src/tex/image/tools.js';
import { buildFormat, FORMAT_CAP, inBuildSandbox } from '../../src/tex/caches/format-build.js';
import { MEMORY_BYTES, PROCESSES, type TexJob, type TexResult } from '../../src/tex/job.js';
import { splitPreamble, texliveIdentity } from '../../src/tex/caches/preamble.js';
import { TexRunner } from '../../src/tex/runner.js';
import type { JobFormat } from '../../src/tex/caches/job-start.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const UID = process.getuid?.() === 0 ? CONVERTER_UID - 4 : undefined;
const MB = 1024 * 1024;
const WARM_MARK = '\\read16 to\\x \\let\\x\\undefined\\nonstopmode';

const SAMPLE = [
  '% /var/lib/texmf/fonts/map/pdftex/updmap/pdftex_dl14.map:',
  "% Don't change this file directly. Use updmap[-sys] instead.",
  '% cm.map',
  'cmr10 CMR10 <cmr10.pfb',
  '  cmbx10 CMBX10 <cmbx10.pfb',
  '% Alegreya.map',
  'Alegreya-Regular-lf-t1 Alegreya-Regular "AlgrRegularEnc ReEncodeFont" <[a_x.enc <Alegreya-Regular.pfb',
  '% lm.map',
  'rm-lmr10 LMRoman10-Regular "enclmrm ReEncodeFont" <lm-rm.enc <lmr10.pfb',
  '',
].join('\n');

describe('core font map', () => {
  test('splits pdftex.map by its sections: the core files’ lines, and which fonts only the whole map has', () => {
    const maps = FontMaps.split(SAMPLE, ['cm.map', 'lm.map']);
    assert.equal(maps.core, 'cmr10 CMR10 <cmr10.pfb\n  cmbx10 CMBX10 <cmbx10.pfb\nrm-lmr10 LMRoman10-Regular "enclmrm ReEncodeFont" <lm-rm.enc <lmr10.pfb\n');
    assert.equal(maps.coreSize, 3);
    const fls = (...fonts: string[]) => ['PWD /tmp', 'INPUT /usr/share/texlive/texmf-dist/tex/latex/base/article.cls', ...fonts.map((f) => `INPUT /usr/share/texlive/texmf-dist/fonts/tfm/x/${f}.tfm`)].join('\n');
    assert.equal(maps.needsWholeMap(fls('cmr10', 'rm-lmr10', 'cmbx10')), false);
    assert.equal(maps.needsWholeMap(fls('cmr10', 'Alegreya-Regular-lf-t1')), true);
    // A font no map has (a METAFONT font): the whole map would not embed it otherwise.
    assert.equal(maps.needsWholeMap(fls('wncyr10', 'ecrm1000')), false);
    // Metrics the job wrote or brought itself (a relative path) count the same.
    assert.equal(maps.needsWholeMap('INPUT ./Alegreya-Regular-lf-t1.tfm'), true);
    assert.equal(maps.needsWholeMap('OUTPUT Alegreya-Regular-lf-t1.tfm'), false);
    // A font with an entry outside the core too is not core: the whole map decides it.
    const twice = FontMaps.split(`${SAMPLE}% extra.map\ncmr10 CMR10-Other <other.pfb\n`, ['cm.map']);
    assert.equal(twice.core, '  cmbx10 CMBX10 <cmbx10.pfb\n');
    assert.equal(twice.needsWholeMap(fls('cmr10')), true);
  });

  describe('in the sandbox', () => {
    let root: string;
    let formats: Formats;
    let core: TexRunner;
    let whole: TexRunner;
    const job = (source: string): TexJob => ({ source, compiler: 'pdflatex', timeoutMs: 60_000, maxFileBytes: 16 * MB });
    /** The job on the core map's runner, its slot warm, and on the whole map's. */
    const both = async (source: string): Promise<[TexResult, TexResult]> => {
      await core.run(job('\\documentclass{article}\\begin{document}warm-up\\end{document}'), UID);
      const hot = await core.run(job(source), UID);
      const ref = await whole.run(job(source), UID);
      assert.equal(hot.outcome, 'ok', hot.log.slice(-800));
      assert.equal(ref.outcome, 'ok', ref.log.slice(-800));
      return [hot, ref];
    };

    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'quire-fontmap-'));
      await chmod(root, 0o711);
      formats = await prepareFormats(root, defaultImageRoot());
      core = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), formats: async () => formats });
      // The same inflated formats without the core map: every pass reads pdftex.map.
      const { fontMaps: _, ...withoutCore } = formats;
      whole = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), formats: async () => withoutCore });
    });
    after(async () => {
      await Promise.all([core.close(), whole.close()]);
      await rm(root, { recursive: true, force: true });
    });

    test("the image's core map: beside the formats, a fifth of pdftex.map or less, every listed map file in it", async () => {
      assert.ok(formats.fontMaps, 'TeX Live has a pdftex.map');
      const text = await readFile(join(formats.dir, CORE_MAP), 'utf8');
      assert.equal(text, formats.fontMaps.core);
      const wholeText = await readFile(hostPath((await imageTool(['kpsewhich', 'pdftex.map'], defaultImageRoot())).trim(), defaultImageRoot()), 'utf8');
      assert.ok(text.length * 5 <= wholeText.length, `core ${text.length} of ${wholeText.length} bytes`);
      for (const file of ['cm.map', 'lm.map', 'ps2pk35.map', 'fontawesome5.map']) assert.ok(CORE_MAP_FILES.includes(file));
      for (const font of ['cmr10', 'ecrm1000', 'rm-lmr10', 'ptmr8r', 'msbm10', 'ec-qplr', 'fa5free0solid']) {
        assert.match(text, new RegExp(`^${font} `, 'm'), font);
      }
    });

    test('documents in core fonts: one attempt on the warm engine, the whole map’s PDF byte for byte', async () => {
      const documents = [
        '\\documentclass{article}\\begin{document}Hello, Quire. $e^{i\\pi}+1=0$\\end{document}',
        '\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{lmodern,amssymb}\\begin{document}\\textbf{Bold} \\emph{it} $\\mathbb{R}$\\end{document}',
        '\\documentclass{article}\\usepackage{mathptmx}\\usepackage[T1]{fontenc}\\usepackage{tgheros}\\begin{document}Times \\textsf{Heros}\\end{document}',
        // Two passes: the second runs on the engine started during the first, with the core map too.
        '\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{tgpagella}\\begin{document}\\section{One}\\label{a}See \\ref{a}.\\end{document}',
      ];
      for (const source of documents) {
        const [hot, ref] = await both(source);
        assert.equal(hot.stages?.fontmap, undefined, source);
        assert.ok(hot.log.includes(WARM_MARK), 'a warm engine ran the last pass');
        assert.equal(hot.passes, ref.passes);
        assert.equal(stable(hot.pdf), stable(ref.pdf), source);
      }
    });

    test('a document in a font only the whole map has runs again with it: the whole map’s PDF, the fontmap stage timed', async () => {
      const source = '\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{librebaskerville}\\begin{document}Libre Baskerville \\textbf{bold}\\end{document}';
      const [hot, ref] = await both(source);
      assert.ok((hot.stages?.fontmap ?? 0) > 0, 'the core attempt was given up');
      assert.equal(hot.pages, 1);
      assert.equal(stable(hot.pdf), stable(ref.pdf));
      const fonts = execFileSync('pdffonts', ['-'], { input: hot.pdf }).toString();
      assert.match(fonts, /\+LibreBskvl-Regular +Type 1 +Custom +yes +yes/);
      // The job's timeout covers both attempts: a first pass that spends most of it, then asks
      // for a font outside the core, times out in the second instead of getting its time again.
      const slow = `\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{librebaskerville}\\begin{document}\\pdfresettimer\\loop\\ifnum\\pdfelapsedtime<262144 \\repeat Slow.\\end{document}`;
      await core.run(job('\\documentclass{article}\\begin{document}warm-up\\end{document}'), UID);
      const timed = await core.run({ ...job(slow), timeoutMs: 6000 }, UID);
      assert.equal(timed.outcome, 'timeout');
      // Under two timeouts (12 s) proves the second attempt did not get its time again. It takes
      // 6.0-6.1 s alone (2026-12-05, a fresh machine at load 15-18, main and this branch alike);
      // the 9.3-10.2 s seen on 2026-12-04 did not come back there, so the bound says only what
      // the test is for and leaves room for a loaded suite.
      assert.ok(timed.durationMs < 11_000, `took ${timed.durationMs} ms`);
      // And the next job of the slot is back on the core map.
      const [after] = await both('\\documentclass{article}\\begin{document}After.\\end{document}');
      assert.equal(after.stages?.fontmap, undefined);
    });

    /** A preamble format of `source`, built and verified in a sandbox as the preamble cache does. */
    const format = async (source: string): Promise<JobFormat> => {
      const limits = { cpuSeconds: 30, fileBytes: FORMAT_CAP, memoryBytes: MEMORY_BYTES, processes: PROCESSES };
      const { baseBytes } = await texliveIdentity(defaultImageRoot());
      const built = await inBuildSandbox(core.pool, job(source), UID, limits, 512 * MB, new AbortController().signal, (exec, workspace) =>
        buildFormat(exec, workspace, { source, files: [], day: '2026-11-28', baseBytes, preambleLines: splitPreamble(source)!.lines, fontMaps: core.pool.fontMaps }),
      );
      assert.ok('entry' in built, JSON.stringify(built));
      return built.entry;
    };
    const preamble = (fonts: string, encoding = 'T1') =>
      `\\documentclass{article}\n\\usepackage{tikz}\n\\usepackage[${encoding}]{fontenc}\n\\usepackage{${fonts}}\n\\newlength\\quirew\\settowidth\\quirew{\\normalfont Width}\n`;
    const body = (text: string) => `\\begin{document}\n${text}\n\\tikz\\draw (0,0) -- (1,1);\n\\end{document}\n`;

    test('a preamble format: core fonts only, its engines read the core map; a font outside it, the whole map', async () => {
      // Pagella, measured in the preamble (the format holds the font): core.
      const pagella = await format(`${preamble('tgpagella')}${body('Pagella.')}`);
      assert.equal(pagella.coreMap, true);
      const plain = `${preamble('tgpagella')}${body('Pagella again, \\textbf{bold}.')}`;
      await core.run(job('\\documentclass{article}\\begin{document}warm-up\\end{document}'), UID);
      const hot = await core.run(job(plain), UID, { from: 'format', format: pagella });
      const ref = await whole.run(job(plain), UID);
      assert.equal(hot.outcome, 'ok', hot.log.slice(-800));
      assert.match(hot.log, /preloaded format=quirepre/);
      assert.equal(hot.stages?.fontmap, undefined);
      assert.equal(execFileSync('pdftotext', ['-', '-'], { input: hot.pdf }).toString(), execFileSync('pdftotext', ['-', '-'], { input: ref.pdf }).toString());
      assert.ok(execFileSync('pdftoppm', ['-r', '50', '-'], { input: hot.pdf }).equals(execFileSync('pdftoppm', ['-r', '50', '-'], { input: ref.pdf })));
      // Its body opens a font only the whole map has: the job runs again with it (without the format).
      const libreBody = `${preamble('tgpagella')}${body('\\fontfamily{LibreBskvl-LF}\\selectfont Libre Baskerville.')}`;
      const again = await core.run(job(libreBody), UID, { from: 'format', format: pagella });
      assert.equal(again.outcome, 'ok', again.log.slice(-800));
      assert.ok((again.stages?.fontmap ?? 0) > 0, 'the core attempt was given up');
      assert.match(execFileSync('pdffonts', ['-'], { input: again.pdf }).toString(), /\+LibreBskvl-Regular +Type 1 +Custom +yes +yes/);

      // Libre Baskerville measured in the preamble, in OT1 (a font of its own, not a virtual one
      // whose base fonts a pass opens): the format holds a font outside the core, and no pass
      // would open its metrics again to tell. Its engines read the whole map.
      const libre = await format(`${preamble('librebaskerville', 'OT1')}${body('Libre.')}`);
      assert.equal(libre.coreMap, false);
      const source = `${preamble('librebaskerville', 'OT1')}${body('Libre Baskerville, \\textbf{bold}.')}`;
      const held = await core.run(job(source), UID, { from: 'format', format: libre });
      assert.equal(held.outcome, 'ok', held.log.slice(-800));
      assert.match(held.log, /preloaded format=quirepre/);
      assert.equal(held.stages?.fontmap, undefined);
      assert.match(execFileSync('pdffonts', ['-'], { input: held.pdf }).toString(), /\+LibreBskvl-Regular +Type 1 +Custom +yes +yes/);
    });
  });
});
