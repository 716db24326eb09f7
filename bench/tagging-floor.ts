// What TeX Live's tagging itself costs, with no service around it (issue 40's ≤ 1.5× goal):
// bare pdflatex in the default image runs the bench's invoice (bench/output.ts) tagged ua-2 and
// untagged, pass after pass in one sandbox, and \pdfelapsedtime at the kernel's hooks splits
// each pass into the preamble (a preamble format removes it), \begin{document} and the body
// with the ending (no cache removes those). A tagged pass also says whether TeX asks for another.
//
//   node --import tsx bench/tagging-floor.ts        (BENCH_RUNS passes of each, default 6)
import { defaultImageRoot } from '../src/tex/image/default.js';
import { imageToolOutput } from '../src/tex/image/tools.js';
import { invoice } from './output.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 6);

/** The kernel's hooks in run order; the format's dump point is env/document/before (caches/format-build.ts). */
const HOOKS = [
  ['dump', 'env/document/before'],
  ['body', 'begindocument/end'],
  ['end', 'enddocument/end'],
] as const;
const timing = HOOKS.map(([label, hook]) => `\\AddToHook{${hook}}{\\typeout{T-${label} \\the\\pdfelapsedtime}}`).join('\n');

const TAGGED = `\\DocumentMetadata{lang=de-DE,pdfstandard=ua-2,pdfversion=2.0,tagging=on}\n${invoice(1).replace('\\begin{document}', `${timing}\n\\begin{document}`)}`;
const UNTAGGED = invoice(1)
  .replace('\\tagpdfsetup{table/header-rows={1}}\n', '')
  .replace('\\begin{document}', `${timing}\n\\begin{document}`);

interface Pass {
  /** Seconds of TeX from the start to each hook. */
  at: Record<(typeof HOOKS)[number][0], number>;
  rerun: boolean;
}

async function passes(source: string): Promise<Pass[]> {
  const script = `echo ${Buffer.from(source).toString('base64')} | base64 -d > main.tex; for i in $(seq ${RUNS}); do pdflatex -interaction=nonstopmode main.tex >/dev/null; grep '^T-' main.log; grep -c 'Rerun to get\\|may have changed' main.log || true; echo ==; done`;
  const { stdout } = await imageToolOutput(['sh', '-c', script], { env: { HOME: '/tmp' } }, defaultImageRoot(), 600_000);
  return stdout
    .split('==\n')
    .filter((block) => block.includes('T-end'))
    .map((block) => {
      const at = Object.fromEntries([...block.matchAll(/^T-(\w+) (\d+)$/gm)].map((m) => [m[1], Number(m[2]) / 65536])) as Pass['at'];
      return { at, rerun: Number(/^(\d+)$/m.exec(block)?.[1] ?? 0) > 0 };
    });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (s: number) => `${Math.round(s * 1000)} ms`.padStart(8);

const tagged = await passes(TAGGED);
const untagged = await passes(UNTAGGED);
if (tagged.length === 0 || untagged.length === 0) throw new Error('tagging-floor: pdflatex did not run in the image (npm run setup)');
const row = (name: string, list: Pass[]) => {
  const preamble = median(list.map((p) => p.at.dump));
  const begin = median(list.map((p) => p.at.body - p.at.dump));
  const rest = median(list.map((p) => p.at.end - p.at.body));
  console.log(`${name.padEnd(10)} ${ms(preamble)} ${ms(begin)} ${ms(rest)} ${ms(begin + rest)}   ${list.map((p) => (p.rerun ? 'rerun' : 'done')).join(' ')}`);
  return begin + rest;
};
console.log(`bare pdflatex in ${defaultImageRoot() ?? 'the host'}, medians of ${RUNS} passes in one folder (the first without .aux)`);
console.log(`${''.padEnd(10)} ${'preamble'.padStart(8)} ${'\\begin'.padStart(8)} ${'body+end'.padStart(8)} ${'uncached'.padStart(8)}   each pass`);
const t = row('tagged', tagged);
const u = row('untagged', untagged);
const needed = tagged.findIndex((p) => !p.rerun) + 1;
console.log(`\nWhat no preamble cache removes, tagged / untagged: ${(t / u).toFixed(2)}× per pass; the tagged document takes ${needed} passes from no .aux: ${((needed * t) / u).toFixed(2)}×.`);
