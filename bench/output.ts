// Bench cases of the `output` option (issue 23), each interleaved with its bare equivalent:
// PDF/A-1b hello (service: pdfx, then PDFBox Preflight) against bare pdflatex with pdfx and
// its .xmpdata; encrypted hello against bare pdflatex then `qpdf --encrypt`; and the time a
// page image adds to a one-page compile (the same request with and without page_images); and
// the time a PAdES signature adds (output.sign with an inline PKCS#12, AES-256 as OpenSSL 3
// writes it, against the same request without it; issue 40); and
// a tagged PDF/UA-2 invoice against the same invoice untagged, both through the service
// (issue 40: tagging should cost at most 1.5× the untagged render), each from its preamble
// format once the warm-ups had both built.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bare } from './bare.js';
import { makeCa, makeLeaf, p12 } from '../test/signing/pki.js';

export interface OutputCase {
  name: string;
  /** The service's run of fresh source `n`. */
  service(n: number): Promise<void>;
  /** What it is measured against, for the same `n`. */
  bare(n: number): Promise<void>;
  /** `ratio`: service/bare ≤ goal; `added`: service − bare ≤ goal ms. */
  goal: { kind: 'ratio' | 'added'; value: number };
  /** As in LatencyCase (cases.ts): untimed runs, and what to wait for after each. */
  warmup?: number;
  prepare?(): Promise<void>;
  afterRun?(i: number): Promise<void>;
}

/** The preamble cache's bytes, and a wait until it holds more than `before` (or a minute passed). */
export interface FormatWatch {
  bytes(): Promise<number>;
  waitFor(before: number): Promise<void>;
}

/** POSTs a compile with `body` and GETs its PDF (the bench's service call). */
export type ServiceCall = (body: Record<string, unknown>) => Promise<void>;

const hello = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n% output ${n}\n`;
const withPdfx = (n: number) => hello(n).replace('\\documentclass{article}\n', '\\documentclass{article}\n\\usepackage[a-1b]{pdfx}\n');

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return bare(cwd, cmd, args, cmd === 'qpdf' ? [0, 3] : [0]);
}

let seq = 0;
/** A fresh directory with main.tex (and `extra` files), `steps` run in it, then removed. */
async function inDir(root: string, source: string, extra: Record<string, string>, steps: Array<[string, string[]]>): Promise<void> {
  const dir = join(root, `o${seq++}`);
  await mkdir(dir);
  await writeFile(join(dir, 'main.tex'), source);
  for (const [name, text] of Object.entries(extra)) await writeFile(join(dir, name), text);
  for (const [cmd, args] of steps) await run(cmd, args, dir);
  await rm(dir, { recursive: true, force: true });
}

/** A one-page invoice: letterhead, a heading, an items table with a header row (for tagging). */
export const invoice = (n: number) =>
  [
    '\\documentclass[11pt]{article}',
    '\\usepackage[margin=2cm]{geometry}',
    '\\usepackage{booktabs}',
    '\\tagpdfsetup{table/header-rows={1}}',
    '\\begin{document}',
    `\\section*{Invoice 2026-${String(n).padStart(4, '0')}}`,
    'ACME GmbH, Hauptstraße 1, 10115 Berlin. Billed to: Müller GmbH.',
    '',
    '\\begin{tabular}{lrr}',
    '\\toprule Item & Hours & Amount\\\\ \\midrule',
    ...Array.from({ length: 12 }, (_, i) => `Consulting, week ${i + 1} & 8 & 1{,}000.00\\\\`),
    '\\midrule Total & 96 & 12{,}000.00\\\\ \\bottomrule',
    '\\end{tabular}',
    '',
    'Payable within 30 days.',
    '\\end{document}',
    '',
  ].join('\n');

const PDFLATEX: [string, string[]] = ['pdflatex', ['-interaction=nonstopmode', '-halt-on-error', 'main.tex']];

export function outputCases(root: string, service: ServiceCall, formats: FormatWatch, warmup: number): OutputCase[] {
  // The tagged row's warm-ups: the untagged invoice's format is built after the first run (its
  // bare run comes first), the tagged one's after the second (one build at a time): wait for each.
  let formatBytes = 0;
  const awaitFormat = async () => {
    await formats.waitFor(formatBytes);
    formatBytes = await formats.bytes();
  };
  const ca = makeCa('Bench CA');
  const identity = p12(makeLeaf(ca, 'Bench Signer'), [ca], 'bench-password');
  return [
    {
      name: 'PDF/A-1b hello vs pdflatex + pdfx',
      service: (n) => service({ latex: hello(n), output: { pdf_standard: 'a-1b', metadata: { title: 'Bench' } } }),
      bare: (n) => inDir(root, withPdfx(n), { 'main.xmpdata': '\\Title{Bench}\n' }, [PDFLATEX]),
      goal: { kind: 'ratio', value: 0.6 },
    },
    {
      name: 'encrypted hello vs pdflatex + qpdf',
      service: (n) => service({ latex: hello(n), output: { encrypt: { user_password: 'u', owner_password: 'o', permissions: { print: false, modify: false } } } }),
      bare: (n) => inDir(root, hello(n), {}, [PDFLATEX, ['qpdf', ['--encrypt', 'u', 'o', '256', '--print=none', '--modify=none', '--', 'main.pdf', 'out.pdf']]]),
      goal: { kind: 'ratio', value: 0.6 },
    },
    {
      name: 'page image of a one-pager (ms added)',
      service: (n) => service({ latex: hello(n), output: { page_images: { pages: [1], dpi: 72 } } }),
      bare: (n) => service({ latex: hello(-n) }),
      goal: { kind: 'added', value: 150 },
    },
    {
      name: 'signed one-pager (ms added)',
      service: (n) => service({ latex: hello(n), output: { sign: { p12_base64: identity, password: 'bench-password', reason: 'Bench' } } }),
      bare: (n) => service({ latex: hello(-n) }),
      goal: { kind: 'added', value: 100 },
    },
    {
      name: 'tagged ua-2 invoice vs untagged',
      service: (n) => service({ latex: invoice(n), output: { pdf_standard: 'ua-2', metadata: { title: 'Invoice', lang: 'de-DE' } } }),
      // The same invoice untagged (without \\tagpdfsetup, which only a tagged document defines).
      bare: (n) => service({ latex: invoice(-n - 1).replace('\\tagpdfsetup{table/header-rows={1}}\n', '') }),
      goal: { kind: 'ratio', value: 1.5 },
      warmup: Math.max(warmup, 3),
      prepare: async () => {
        formatBytes = await formats.bytes();
      },
      afterRun: async (i) => (i < 2 ? awaitFormat() : undefined),
    },
  ];
}
