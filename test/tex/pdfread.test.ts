// The in-process PDF reader (tex/pdf/pdfread.ts) agrees with qpdf: on real PDFs of the three
// engines carrying the hygiene corpus's active content (and ordinary links), on generated PDFs
// with every spelling of the scanned keys (name escapes, octal, hex and UTF-16 strings, case),
// plain and rewritten by qpdf into object streams, and on random mutations of them, where it
// may give up (null: the runner asks qpdf) but never disagree.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { activeContent, SCAN_PATTERN } from '../../src/tex/pdf/pdfcheck.js';
import { bareCommand } from '../../src/tex/image/tools.js';
import { inspectPdf } from '../../src/tex/pdf/pdfread.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const dir = mkdtempSync(join(tmpdir(), 'quire-pdfread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What the runner's qpdf inspection says of `pdf` (the same command, outside the sandbox), or null when qpdf cannot read it. */
function qpdfVerdict(pdf: Buffer): { pages: number; active: string[] } | null {
  const file = join(dir, 'q.pdf');
  writeFileSync(file, pdf);
  const run = spawnSync('qpdf', ['--json=2', '--json-key=qpdf', '--json-key=pages', file], { maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0 && run.status !== 3) return null;
  const json = run.stdout.toString('utf8');
  const pages = json.split('\n').filter((line) => /^ *"pageposfrom1": [0-9]+,?$/.test(line)).length;
  let scan = '';
  try {
    scan = execFileSync('grep', ['-E', '-i', '-o', SCAN_PATTERN], { input: json, maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
  } catch {
    scan = '';
  }
  return { pages, active: activeContent(scan) };
}

/** `pdf` rewritten by qpdf with compressed object streams and a cross-reference stream. */
function withObjectStreams(pdf: Buffer): Buffer {
  const input = join(dir, 'in.pdf');
  const output = join(dir, 'out.pdf');
  writeFileSync(input, pdf);
  const run = spawnSync('qpdf', ['--object-streams=generate', '--compress-streams=y', input, output]);
  assert.ok(run.status === 0 || run.status === 3, run.stderr.toString());
  return readFileSync(output);
}

function tex(engine: string, body: string, preamble = ''): Buffer {
  const work = mkdtempSync(join(dir, 'tex-'));
  writeFileSync(join(work, 'main.tex'), `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`);
  const bare = bareCommand(work, [engine, '-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', 'main.tex'], work, defaultImageRoot());
  execFileSync(bare.file, bare.args, { cwd: work, stdio: 'ignore' });
  return readFileSync(join(work, 'main.pdf'));
}

const pdfAnnot = (action: string) => `Click \\pdfannot width 10pt height 10pt depth 0pt {\\detokenize{/Subtype /Link /A ${action}}}`;

describe('in-process PDF reader', () => {
  test('agrees with qpdf on the hygiene corpus, from all three engines', () => {
    const corpus: Array<[string, string, string?]> = [
      ['pdflatex', 'x', '\\pdfcatalog{\\detokenize{/OpenAction << /S /JavaScript /JS (app.alert(1)) >>}}'],
      ['pdflatex', 'x', '\\pdfcatalog{/AA << /WC << /S /Java\\string#53cript /JS (app.alert) >> >>}'],
      ['pdflatex', '\\immediate\\pdfobj{\\detokenize{<< /S /JavaScript /JS (app.alert(1)) >>}}\\edef\\js{\\the\\pdflastobj}\\pdfnames{/JavaScript << /Names [(x) \\js\\space 0 R] >>} x'],
      ['pdflatex', pdfAnnot('<< /S /URI /URI (\\152avascript:alert(1)) >>')],
      ['pdflatex', pdfAnnot('<< /S /URI /URI <6a617661736372697074 3a616c657274283129> >>')],
      ['pdflatex', '\\href{JavaScript:alert(1)}{click} \\newpage two', '\\usepackage{hyperref}'],
      ['pdflatex', pdfAnnot('<< /S /Launch /F (calc.exe) >>')],
      ['xelatex', '\\special{pdf:ann width 10pt height 10pt << /Type /Annot /Subtype /Link /A << /S /Launch /F (calc.exe) >> >>} x'],
      ['lualatex', '\\pdfextension annot width 10pt height 10pt depth 0pt {/Subtype /Link /A << /S /JavaScript /JS (app.alert(1)) >>} x'],
      ['xelatex', '\\section{One}\\label{one}See \\href{https://example.com/a?b=c}{the site}, \\href{mailto:a@example.com}{mail}, \\ref{one}.\\newpage Two', '\\usepackage{hyperref}'],
      ['lualatex', '\\section{One}\\label{one}See \\href{https://example.com/a?b=c}{the site}, \\href{mailto:a@example.com}{mail}, \\ref{one}.', '\\usepackage{hyperref}'],
      ['pdflatex', 'Hello, slightly damaged.', '\\pdfcatalog{/PageMode /UseNone /PageMode /UseOutlines}'],
    ];
    let refusals = 0;
    for (const [engine, body, preamble] of corpus) {
      const pdf = tex(engine, body, preamble);
      const mine = inspectPdf(pdf);
      assert.ok(mine, `${engine} ${body.slice(0, 60)}: the reader gave up on TeX's own PDF`);
      assert.deepEqual(mine, qpdfVerdict(pdf), `${engine} ${body.slice(0, 60)}`);
      if (mine.active.length > 0) refusals++;
    }
    assert.equal(refusals, 9);
  });

  // Generated PDFs: one link annotation per page, each with an action spelled at random.
  const escapeName = (name: string, escapes: boolean[]) =>
    [...name].map((c, i) => (escapes[i % escapes.length] ? `#${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c)).join('');
  const caseOf = (name: string, upper: boolean[]) => [...name].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join('');
  const pdfName = fc.tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), fc.boolean());
  const spellName = (name: string, [escapes, upper, mixCase]: [boolean[], boolean[], boolean]) => `/${escapeName(mixCase ? caseOf(name, upper) : name, escapes)}`;
  const uriText = fc.tuple(fc.constantFrom('javascript:', 'JavaScript:', ' java\tscript:', 'vbscript:', 'https://', 'mailto:', 'javascriptx', 'jav'), fc.stringMatching(/^[a-z0-9()]{0,8}$/));
  const pdfString = fc.tuple(fc.constantFrom('literal', 'octal', 'hex', 'utf16'), fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }));
  const spellString = (text: string, [kind, octal]: [string, boolean[]]) => {
    if (kind === 'hex') return `<${Buffer.from(text, 'latin1').toString('hex')}>`;
    if (kind === 'utf16') return `<feff${Buffer.from(text, 'utf16le').swap16().toString('hex')}>`;
    return `(${[...text].map((c, i) => (c === '(' || c === ')' ? `\\${c}` : kind === 'octal' && octal[i % octal.length] ? `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}` : c)).join('')})`;
  };
  const action = fc.oneof(
    fc.tuple(pdfName, uriText, pdfString).map(([n, [scheme, rest], s]) => `<< /S /URI ${spellName('URI', n)} ${spellString(scheme + rest, s)} >>`),
    fc.tuple(pdfName, pdfName).map(([s, js]) => `<< /S ${spellName('JavaScript', s)} ${spellName('JS', js)} (app.alert(1)) >>`),
    fc.tuple(pdfName, pdfName).map(([key, value]) => `<< ${spellName('S', key)} ${spellName('Launch', value)} /F (calc.exe) >>`),
    fc.constant('<< /S /GoTo /D [3 0 R /Fit] >>'),
    fc.constant('<< /S /JavaScript >>'),
  );
  const doc = fc.record({ actions: fc.array(action, { minLength: 1, maxLength: 4 }), names: fc.boolean() });

  function buildPdf({ actions, names }: { actions: string[]; names: boolean }): Buffer {
    const pages = actions.length;
    const objects: string[] = [];
    const pageNums = actions.map((_, i) => 3 + i);
    const annotNums = actions.map((_, i) => 3 + pages + i);
    objects.push(`<< /Type /Catalog /Pages 2 0 R${names ? ' /Names << /JavaScript << /Names [(a) 1 0 R] >> >>' : ''} >>`);
    objects.push(`<< /Type /Pages /Kids [${pageNums.map((n) => `${n} 0 R`).join(' ')}] /Count ${pages} >>`);
    for (const n of annotNums) objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [${n} 0 R] >>`);
    for (const a of actions) objects.push(`<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A ${a} >>`);
    let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
    const offsets: number[] = [];
    objects.forEach((body, i) => {
      offsets.push(Buffer.byteLength(out, 'latin1'));
      out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    });
    const xref = Buffer.byteLength(out, 'latin1');
    out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    return Buffer.from(out, 'latin1');
  }

  test('agrees with qpdf on generated PDFs, plain and in object streams (property)', () => {
    fc.assert(
      fc.property(doc, (d) => {
        const plain = buildPdf(d);
        const expected = qpdfVerdict(plain);
        assert.ok(expected && expected.pages === d.actions.length);
        assert.deepEqual(inspectPdf(plain), expected);
        const packed = withObjectStreams(plain);
        assert.ok(/\/ObjStm/.test(packed.toString('latin1')), 'qpdf wrote object streams');
        assert.deepEqual(inspectPdf(packed), qpdfVerdict(packed));
      }),
      { numRuns: 40 },
    );
  });

  test('on mutated PDFs it gives up or agrees with qpdf, never finds less (property)', () => {
    fc.assert(
      fc.property(doc, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), fc.boolean(), (d, flips, packed) => {
        const pdf = Buffer.from(packed ? withObjectStreams(buildPdf(d)) : buildPdf(d));
        for (const [at, byte] of flips) pdf[at % pdf.length] = byte;
        const mine = inspectPdf(pdf);
        if (mine === null) return;
        const theirs = qpdfVerdict(pdf);
        if (theirs === null) return;
        assert.equal(mine.pages, theirs.pages);
        // By kind: a finding quotes its URI, and a flipped byte can make a string that qpdf's
        // decoder and Node's render differently (a lone UTF-16 surrogate, bad UTF-8).
        const kind = (finding: string) => finding.replace(/ \(".*$/, '');
        for (const finding of theirs.active) assert.ok(mine.active.map(kind).includes(kind(finding)), `qpdf found ${finding}, the reader did not`);
      }),
      { numRuns: 60 },
    );
  });

  test('reads a URI as qpdf does: byte order marks (UTF-16 either way, UTF-8), PDFDocEncoding, an odd UTF-16 byte', () => {
    const uris = [
      `<fffe${Buffer.from('javascript:x', 'utf16le').toString('hex')}>`,
      `<efbbbf${Buffer.from('javascript:x').toString('hex')}>`,
      `<feff${Buffer.from('javascript:x', 'utf16le').swap16().toString('hex')}00>`,
      '(vbscript:\\200abcdefghijkl)',
      '(https://example.com/\\200\\237\\030)',
    ];
    for (const uri of uris) {
      const pdf = buildPdf({ actions: [`<< /S /URI /URI ${uri} >>`], names: false });
      const mine = inspectPdf(pdf);
      assert.deepEqual(mine, qpdfVerdict(pdf), uri);
      assert.equal(mine?.active.length, uri.startsWith('(https') ? 0 : 1, uri);
    }
    assert.deepEqual(inspectPdf(buildPdf({ actions: ['<< /S /URI /URI (vbscript:\\200abcdefghijkl) >>'], names: false }))?.active, ['script URI ("vbscript:\u2022abcdefghijkl")']);
  });

  test('gives up on what it cannot vouch for: a stream hiding an object header, an updated file, a broken xref, another generation', () => {
    const plain = buildPdf({ actions: ['<< /S /GoTo /D [3 0 R /Fit] >>'], names: false });
    assert.deepEqual(inspectPdf(plain), { pages: 1, active: [] });
    const text = plain.toString('latin1');
    const hidden = text.replace('endobj\n4 0 obj', 'endobj\n9 0 obj\n<< /Length 24 >>\nstream\n7 0 obj <</JS 1>> endobj\nendstream\nendobj\n4 0 obj');
    assert.equal(inspectPdf(Buffer.from(hidden, 'latin1')), null);
    assert.equal(inspectPdf(Buffer.from(`${text}1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n`, 'latin1')), null);
    assert.equal(inspectPdf(Buffer.from(text.replace(/\n(\d{10}) 00000 n /, (_, o: string) => `\n${String(Number(o) + 1).padStart(10, '0')} 00000 n `), 'latin1')), null);
    assert.equal(inspectPdf(Buffer.from('not a PDF')), null);
    // An object whose generation is not the one the xref and its references name is null to
    // qpdf (found by the mutation property: "2 1 obj" made qpdf count no pages).
    const regenerated = Buffer.from(text.replace('\n2 0 obj', '\n2 1 obj'), 'latin1');
    assert.equal(qpdfVerdict(regenerated)?.pages, 0);
    assert.equal(inspectPdf(regenerated), null);
    const both = text.replace('\n2 0 obj', '\n2 1 obj').replace(/(\n\d{10}) 00000 n (\n\d{10} 00000 n \n\d{10} 00000 n \ntrailer)/, '$1 00001 n $2');
    assert.equal(inspectPdf(Buffer.from(both, 'latin1')), null, 'the xref agrees, the references (2 0 R) do not');
  });

  /** What poppler and qpdf say of `pdf`'s PDF/A structure (the check's fallback reads the same). */
  function toolFacts(pdf: Buffer): { pdfaid: string | null; outputIntents: boolean; unembeddedFonts: string[] } {
    const file = join(dir, 'facts.pdf');
    writeFileSync(file, pdf);
    const xmp = execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' });
    const fonts = execFileSync('pdffonts', [file], { encoding: 'utf8' }).split('\n').slice(2).filter((line) => line.trim());
    const expanded = spawnSync('qpdf', ['--qdf', '--object-streams=disable', file, '-'], { maxBuffer: 64 * 1024 * 1024 }).stdout.toString('latin1');
    return {
      pdfaid: /pdfaid:part(?:>|=")\s*(\d)/.exec(xmp)?.[1] ?? null,
      outputIntents: expanded.includes('/OutputIntents'),
      // pdffonts: name, type, encoding, emb, sub, uni, object ID; emb is the fourth column from the end.
      unembeddedFonts: [...new Set(fonts.filter((line) => line.trim().split(/\s+/).at(-5) === 'no').map((line) => line.split(/\s+/)[0]!))].sort(),
    };
  }

  test('reads the PDF/A facts poppler and qpdf read: XMP level, output intent, fonts not embedded', () => {
    const mapped = '\\usepackage{mathptmx}\\pdfmapline{=ptmr8r Times-Roman "TeXBase1Encoding ReEncodeFont" <8r.enc}';
    const pdfs = {
      pdfa: tex('pdflatex', 'Archived.', '\\usepackage[a-1b]{pdfx}'),
      plain: tex('pdflatex', 'Plain.'),
      unembedded: tex('pdflatex', 'Times, not embedded.', mapped),
    };
    for (const [name, pdf] of Object.entries(pdfs)) {
      for (const variant of [pdf, withObjectStreams(pdf)]) {
        const facts = inspectPdf(variant, { pdfa: true })?.pdfa;
        assert.ok(facts, name);
        const theirs = toolFacts(variant);
        assert.equal(/pdfaid:part(?:>|=")\s*(\d)/.exec(facts.xmp ?? '')?.[1] ?? null, theirs.pdfaid, name);
        assert.equal(facts.outputIntents > 0, theirs.outputIntents, name);
        assert.deepEqual(facts.unembeddedFonts, theirs.unembeddedFonts, name);
      }
    }
    // The cases differ where they should: the facts are not all alike.
    assert.equal(inspectPdf(pdfs.pdfa, { pdfa: true })?.pdfa?.outputIntents, 1);
    assert.deepEqual(inspectPdf(pdfs.unembedded, { pdfa: true })?.pdfa?.unembeddedFonts, ['Times-Roman']);
    assert.equal(inspectPdf(pdfs.plain, { pdfa: true })?.pdfa?.xmp, null);
    assert.equal(inspectPdf(pdfs.plain)?.pdfa, undefined, 'only when asked for');
  });
});
