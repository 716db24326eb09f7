// A tagged PDF/UA-2 job (issue 40) from a preamble format, with real TeX in the real sandbox:
// the format of a preamble that starts with the kernel's \DocumentMetadata is built and
// verified, and the same tagged document compiled cold and from the format gives the same
// structure tree (qpdf's JSON read by the service's own reader), the same conformance report,
// the same warnings, the same text and the same XMP claims. Negative controls: the structure
// comparison tells a document with table header cells from one without, and another standard
// never finds the ua-2 format.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FormatCache } from '../../src/tex/caches/format-cache.js';
import { PreambleCache } from '../../src/tex/caches/preamble-cache.js';
import { PrimedFormats } from '../../src/tex/caches/primed-formats.js';
import type { TexJob, TexResult } from '../../src/tex/job.js';
import { pdfStructure } from '../../src/tex/output/conformance-read.js';
import type { OutputSpec } from '../../src/tex/output/spec.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { TexRunner } from '../../src/tex/runner.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 11 : undefined;
const MB = 1024 * 1024;
const DAY = '2026-12-06';

const invoice = (n: number, headerRows = true) =>
  [
    '\\documentclass[11pt]{article}',
    '\\usepackage[margin=2cm]{geometry}',
    '\\usepackage{booktabs}',
    ...(headerRows ? ['\\tagpdfsetup{table/header-rows={1}}'] : []),
    '\\begin{document}',
    `\\section*{Invoice 2026-${String(n).padStart(4, '0')}}`,
    'ACME GmbH, Hauptstraße 1, 10115 Berlin. Billed to: Müller GmbH.',
    '\\subsection*{Items}',
    '',
    '\\begin{tabular}{lrr}',
    '\\toprule Item & Hours & Amount\\\\ \\midrule',
    ...Array.from({ length: 4 + n }, (_, i) => `Consulting, week ${i + 1} & 8 & 1{,}000.00\\\\`),
    '\\midrule Total & 96 & 12{,}000.00\\\\ \\bottomrule',
    '\\end{tabular}',
    '',
    'Payable within 30 days.',
    '\\end{document}',
    '',
  ].join('\n');

const UA2: OutputSpec = { tagging: { ua: 'ua-2', lang: 'de-DE', pdfVersion: '2.0' }, metadata: { title: 'Invoice' } };
const UA1: OutputSpec = { pdfStandard: 'a-2b', tagging: { ua: 'ua-1', lang: 'de-DE', pdfVersion: '1.7' }, metadata: { title: 'Invoice' } };

/** A run started from a preamble format: its transcript names the dumped format. */
const usedFormat = (result: TexResult) => /preloaded format=quirepre/.test(result.log);
const words = (pdf: Buffer | undefined) => execFileSync('pdftotext', ['-', '-'], { input: pdf! }).toString('utf8').replace(/\s+/g, ' ').trim();
/** The XMP's claims (not its dates and ids, which differ from run to run). */
const claims = (pdf: Buffer | undefined) =>
  [...execFileSync('pdfinfo', ['-meta', '-'], { input: pdf! }).toString('utf8').matchAll(/<(pdfuaid:part|pdfaid:part|pdfaid:conformance|dc:title|dc:language|pdf:PDFVersion)[^>]*>([\s\S]*?)<\/\1>/g)].map((m) => `${m[1]}=${m[2]!.replace(/\s+/g, ' ')}`);

describe('tagged jobs from a preamble format', () => {
  let workRoot: string;
  let runner: TexRunner;
  let cold: TexRunner;
  let formats: FormatCache;
  let cache: PreambleCache;
  const reports: Array<{ admitted: boolean; reason?: string }> = [];
  const job = (source: string, output: OutputSpec): TexJob => ({ source, compiler: 'pdflatex', timeoutMs: 120_000, maxFileBytes: 16 * MB, preamble: { scope: 'account:1', day: DAY }, output });

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-tagged-format-'));
    const root = defaultImageRoot();
    runner = new TexRunner({ workRoot, isolate: true, root });
    cold = new TexRunner({ workRoot, isolate: true, root });
    formats = new FormatCache(512 * MB);
    const primed = new PrimedFormats(runner.pool, { maxCount: 2 });
    cache = new PreambleCache(runner, { root, formats, primed, onFormatBuild: (report) => reports.push(report) });
  });
  after(async () => {
    await Promise.all([cold.close(), cache.close()]);
    await rm(workRoot, { recursive: true, force: true });
  });

  test('cold and from the format: one structure tree, conformance report, warnings, text and XMP claims', { timeout: 600_000 }, async () => {
    const first = await cache.run(job(invoice(1), UA2), UID);
    assert.equal(first.outcome, 'ok', first.log.slice(-3000));
    await cache.formatsIdle();
    assert.deepEqual(reports, [{ admitted: true }]);

    for (const n of [2, 3]) {
      const source = invoice(n);
      const warm = await cache.run(job(source, UA2), UID);
      const reference = await cold.run(job(source, UA2), UID);
      assert.equal(warm.outcome, 'ok', warm.log.slice(-3000));
      assert.equal(reference.outcome, 'ok', reference.log.slice(-3000));
      assert.ok(usedFormat(warm), 'the tagged job ran from the format');
      assert.ok(!usedFormat(reference));
      assert.equal(reference.conformance?.violations.length, 0, JSON.stringify(reference.conformance));
      assert.deepEqual(warm.conformance, reference.conformance);
      assert.deepEqual(warm.warnings, reference.warnings);
      assert.equal(warm.passes, reference.passes);
      assert.equal(warm.totalPages, reference.totalPages);
      assert.equal(words(warm.pdf), words(reference.pdf));
      assert.deepEqual(claims(warm.pdf), claims(reference.pdf));
      const [a, b] = [await pdfStructure(warm.pdf!, true), await pdfStructure(reference.pdf!, true)];
      assert.ok(a !== null && a.includes('"/S":"/Table"'), 'a structure tree with the table');
      assert.equal(a, b);
    }
    assert.equal(formats.stats.hits, 2);
  });

  test('negative controls: the structure comparison sees a missing header row; ua-1 never finds the ua-2 format', { timeout: 600_000 }, async () => {
    // One job at a time on a uid, as the service's slots run them: two at once left the first
    // one's next warm sandbox running after the pool closed (its spare was replaced).
    const withTh = await cold.run(job(invoice(4), UA2), UID);
    const withoutTh = await cold.run(job(invoice(4, false), UA2), UID);
    assert.equal(words(withTh.pdf), words(withoutTh.pdf), 'the same text');
    assert.notEqual(await pdfStructure(withTh.pdf!, true), await pdfStructure(withoutTh.pdf!, true));

    const hits = formats.stats.hits;
    const other = await cache.run(job(invoice(5), UA1), UID);
    assert.equal(other.outcome, 'ok', other.log.slice(-3000));
    assert.ok(!usedFormat(other));
    assert.equal(formats.stats.hits, hits);
    assert.deepEqual(claims(other.pdf).filter((c) => c.startsWith('pdfuaid')), ['pdfuaid:part=1']);
  });
});
