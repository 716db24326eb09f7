// The bench's latency rows, one table: each row is a service call and what it is measured
// against, run interleaved (bare, then service) so both see the same machine load. A new row
// is one entry here (or in a module whose cases are spread in, as bench/output.ts's are);
// bench/run.ts times every row the same way and labels it with the caches that served it
// (bench/caches.ts). Goals from issue 27: one-pagers ≤ 0.30× bare (pdflatex), 0.25× (xelatex),
// 0.15× (lualatex); a heavy document with its preamble seen ≤ 0.25× and a V2 render ≤ 0.20×
// `latexmk -pdf`; fontspec + unicode-math with the preamble seen ≤ 0.20× `latexmk -xelatex`
// / `-lualatex`. First-seen rows have no goal: they show what a preamble the service has
// never seen costs (no paused process, no format, no result to reuse).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bare } from './bare.js';
import { outputCases } from './output.js';

export type Engine = 'pdflatex' | 'xelatex' | 'lualatex';

export interface LatencyCase {
  name: string;
  /** The service's run of document `n` (fresh for every `n` unless the row repeats one). */
  service(n: number): Promise<void>;
  /** What it is measured against, for the same `n`. */
  bare(n: number): Promise<void>;
  /** `ratio`: service/bare ≤ value; `added`: service − bare ≤ value ms; none: shown, not judged. */
  goal?: { kind: 'ratio' | 'added'; value: number };
  /** The bare column in words, when not the engine run by hand (e.g. "latexmk -pdf"). */
  versus?: string;
  /** Untimed runs first (default: the bench's WARMUP). */
  warmup?: number;
  /** After warm-up run `i`: waits for what the service makes in the background (a format, a paused process). */
  afterRun?(i: number): Promise<void>;
  /** Before the first run (a template to render, say). */
  prepare?(): Promise<void>;
}

/** What the rows need of the running bench. */
export interface BenchContext {
  bareRoot: string;
  /** POSTs `body` to `path` (default /api/v1/compile), GETs the PDF. */
  call(body: Record<string, unknown>, path?: string): Promise<void>;
  /** Resolves once the preamble cache holds more than it did `before`, or after a minute. */
  formatBytes(): Promise<number>;
  waitForFormat(before: number): Promise<void>;
  /** Resolves once a paused preamble waits, or after a minute. */
  waitForPaused(): Promise<void>;
  /** Creates a V2 template of the bench's account; its id. */
  createTemplate(name: string, latex: string): Promise<number>;
  /** The service's compile slots (a paused preamble serves the slot it was made on). */
  slots: number;
  warmup: number;
}

export const hello = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n% ${n}\n`;
/** A hello whose preamble no earlier request had: nothing the service keeps per preamble can serve it. */
const firstSeen = (n: number) => `\\documentclass{article}\n\\newcommand\\benchfirstseen{${n}-${process.pid}-${Date.now()}}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n`;

/** A heavy preamble (tikz, pgfplots, siunitx, hyperref, cleveref) and a contents page; `n` makes the body fresh. */
const HEAVY_PREAMBLE = [
  '\\documentclass{article}',
  '\\usepackage{tikz}',
  '\\usepackage{pgfplots}',
  '\\pgfplotsset{compat=1.18}',
  '\\usepackage{siunitx}',
  '\\usepackage{hyperref}',
  '\\usepackage{cleveref}',
  '',
].join('\n');
const heavy = (n: number) =>
  `${HEAVY_PREAMBLE}\\begin{document}\n\\tableofcontents\n\\section{Results ${n}}\\label{r}\nAs \\cref{r} shows, \\SI{${n}}{\\metre} in run ${n}.\n` +
  `\\begin{tikzpicture}\\begin{axis}\\addplot{x^2 + ${n % 7}};\\end{axis}\\end{tikzpicture}\n\\section{More}Text ${n}.\n\\end{document}\n`;
/** A V2 invoice template: a fixed, heavy-ish preamble and three placeholders. */
const V2_TEMPLATE = [
  '\\documentclass{article}',
  '\\usepackage[a4paper,margin=20mm]{geometry}',
  '\\usepackage[table]{xcolor}',
  '\\usepackage{tikz}',
  '\\usepackage{siunitx}',
  '\\usepackage{booktabs,array,fancyhdr,lastpage}',
  '\\usepackage{hyperref}',
  '\\pagestyle{fancy}\\cfoot{Page \\thepage\\ of \\pageref{LastPage}}',
  '\\begin{document}',
  '\\section*{Invoice {{ number }}}',
  'Billed to {{ customer }}.',
  '\\begin{tabular}{lr}\\toprule Item & Amount\\\\ \\midrule Work & \\SI{ {{ amount }} }{EUR}\\\\ \\bottomrule\\end{tabular}',
  '\\begin{tikzpicture}\\fill[blue!20] (0,0) rectangle (4,1);\\node at (2,0.5) {Paid};\\end{tikzpicture}',
  '\\end{document}',
  '',
].join('\n');
const v2Data = (n: number) => ({ number: `INV-${n}`, customer: `Customer ${n}`, amount: String(100 + n) });
const filled = (n: number) => {
  const data = v2Data(n);
  return V2_TEMPLATE.replace('{{ number }}', data.number).replace('{{ customer }}', data.customer).replace('{{ amount }}', data.amount);
};

/** A modern xelatex/lualatex document: fontspec and unicode-math (paused preambles, issue 27); `n` makes the body fresh. */
const UNICODE_PREAMBLE = ['\\documentclass{article}', '\\usepackage{fontspec}', '\\usepackage{unicode-math}', '\\setmathfont{Latin Modern Math}', ''].join('\n');
const unicodeDoc = (n: number) => `${UNICODE_PREAMBLE}\\begin{document}\n\\section{Note ${n}}\nFresh body ${n}: \\(\\alpha + x^{${n % 9}} = \\sum_i y_i\\), Grüße.\n\\end{document}\n`;

let bareSeq = 0;
/** `cmd args… main.tex` as a user would run it, in a fresh directory holding `source`. */
async function bareRun(root: string, source: string, cmd: string, args: string[]): Promise<void> {
  const dir = join(root, `b${bareSeq++}`);
  await mkdir(dir);
  await writeFile(join(dir, 'main.tex'), source);
  await bare(dir, cmd, [...args, 'main.tex']);
  await rm(dir, { recursive: true, force: true });
}
export const bareEngine = (root: string, engine: Engine, source = hello(bareSeq)) => bareRun(root, source, engine, ['-interaction=nonstopmode', '-halt-on-error']);
const bareLatexmk = (root: string, source: string, mode: string) => bareRun(root, source, 'latexmk', [mode, '-interaction=nonstopmode', '-halt-on-error']);

const GOALS: Record<Engine, number> = { pdflatex: 0.3, xelatex: 0.25, lualatex: 0.15 };

export function latencyCases(ctx: BenchContext): LatencyCase[] {
  const { bareRoot, call } = ctx;
  // A paused preamble is made on the second delivery of a preamble, in the background, and
  // serves the slot it was made on: the bench waits for the first, and every slot needs one
  // miss first.
  const paused = (): Pick<LatencyCase, 'warmup' | 'afterRun'> => ({
    warmup: ctx.warmup + 2 * ctx.slots,
    afterRun: async (i) => (i === 1 ? ctx.waitForPaused() : undefined),
  });
  // The preamble cache builds a format from the first delivery, in the background: wait for it.
  const formatBuilt = (first?: () => Promise<void>): Pick<LatencyCase, 'prepare' | 'afterRun'> => {
    let before = 0;
    return {
      prepare: async () => {
        await first?.();
        before = await ctx.formatBytes();
      },
      afterRun: async (i) => (i === 0 ? ctx.waitForFormat(before) : undefined),
    };
  };
  const fixed = hello(-1);
  let templateId = 0;
  const cases: LatencyCase[] = [];
  for (const engine of ['pdflatex', 'xelatex', 'lualatex'] as const) {
    const goal = { kind: 'ratio' as const, value: GOALS[engine] };
    // Every hello has the same preamble (for xelatex/lualatex a paused process serves it once
    // made; the row's label counts how many of its runs one did).
    cases.push({ name: `hello ${engine}, POST + GET (fresh body)`, service: (n) => call({ latex: hello(n), compiler: engine }), bare: () => bareEngine(bareRoot, engine), goal });
    if (engine === 'pdflatex') cases.push({ name: 'hello pdflatex, repeated (result cache)', service: () => call({ latex: fixed, compiler: engine }), bare: () => bareEngine(bareRoot, engine), goal });
    cases.push({ name: `hello ${engine}, first-seen preamble`, service: (n) => call({ latex: firstSeen(n), compiler: engine }), bare: (n) => bareEngine(bareRoot, engine, firstSeen(-n)) });
  }
  cases.push(
    { name: 'heavy doc, preamble seen (fresh body)', service: (n) => call({ latex: heavy(n) }), bare: (n) => bareLatexmk(bareRoot, heavy(n), '-pdf'), versus: 'latexmk -pdf', goal: { kind: 'ratio', value: 0.25 }, ...formatBuilt() },
    {
      name: 'V2 render, fresh data',
      ...formatBuilt(async () => {
        templateId = await ctx.createTemplate('bench-invoice', V2_TEMPLATE);
      }),
      service: (n) => call({ data: v2Data(n) }, `/api/v2/templates/${templateId}/render`),
      bare: (n) => bareLatexmk(bareRoot, filled(n), '-pdf'),
      versus: 'latexmk -pdf',
      goal: { kind: 'ratio', value: 0.2 },
    },
  );
  for (const engine of ['xelatex', 'lualatex'] as const) {
    cases.push({ name: `${engine} fontspec+unicode-math, preamble seen`, service: (n) => call({ latex: unicodeDoc(n), compiler: engine }), bare: (n) => bareLatexmk(bareRoot, unicodeDoc(n), `-${engine}`), versus: `latexmk -${engine}`, goal: { kind: 'ratio', value: 0.2 }, ...paused() });
  }
  // The output option (issue 23).
  cases.push(...outputCases(bareRoot, (body) => call(body), { bytes: ctx.formatBytes, waitFor: ctx.waitForFormat }, ctx.warmup));
  return cases;
}
