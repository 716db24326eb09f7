// Builds and verifies one preamble format, in a fresh sandbox holding a copy of the job that
// asked for it (preamble-cache.ts has the runner open it with the job's files). In order: a cold
// pass (so the files a later pass finds, .aux and .toc, exist while the preamble is dumped),
// the dump (pdftex -ini with mylatexformat, recorded), a pass with the format, a cold pass,
// and the comparison of the two: same page count, same page renderings (pdftoppm), same
// text (pdftotext), same warnings. Any doubt rejects the format; nothing is retried.
import { sha256, type FormatEntry } from './format-cache.js';
import { FORMAT_FIRST_LINE } from './job.js';
import type { Exec } from './session.js';
import { collectWarnings } from './warnings.js';
import type { Workspace } from './workspace.js';

/** The dump's job name in the build sandbox (jobs see the format under another name). */
const BUILD = 'quirepre';
/** Largest format kept. */
export const FORMAT_CAP = 64 * 1024 * 1024;
const FLS_CAP = 4 * 1024 * 1024;
const FLAGS = ['-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder'];
/**
 * Set up before mylatexformat runs, and run just before its dump: the format keeps the base
 * format's \everyjob (mylatexformat's own would start its preamble scanner on the job's first
 * line, and print \jobname, which opens main.log at once); the scanner is kept as
 * \MYLATEX@quirescan and the job's first line starts it once main.tex is open (see
 * formatEngineArgs in job.ts). So an engine started ahead of time opens no file of the job
 * until it is given its line. The dump runs in errorstop mode (TeX keeps the interaction mode
 * in the format) on an empty stdin.
 */
const BEFORE_DUMP = String.raw`\expandafter\newtoks\csname MYLATEX@quirejob\endcsname \csname MYLATEX@quirejob\endcsname\expandafter{\the\everyjob}\expandafter\let\csname MYLATEX@quiredump\endcsname\dump \def\dump{\global\expandafter\let\csname MYLATEX@quirescan\expandafter\endcsname\csname MYLATEX@scanpreamble\endcsname\global\everyjob\expandafter{\the\csname MYLATEX@quirejob\endcsname}\csname MYLATEX@quiredump\endcsname}`;

/** The hash of every file in the workspace but PDFs, transcripts, recorder files and the format. */
const WRITTEN = ['sh', '-c', `find . -type f ! -name '*.pdf' ! -name '*.log' ! -name '*.fls' ! -name '${BUILD}.*' -exec sha256sum {} + | LC_ALL=C sort`];

export interface BuildInput {
  source: string;
  files: ReadonlyArray<{ name: string; data: Buffer }>;
  /** YYYY-MM-DD: the verification passes run at noon of that day (SOURCE_DATE_EPOCH), so both see one date. */
  day: string;
  /** Size of the base format (pdflatex.fmt): a format barely larger holds a preamble too light to gain from it. */
  baseBytes: number;
}

/**
 * A job with a format gives up the slot's warm engine (its base format loaded ahead of time)
 * and loads the format on the request's path: only a preamble that adds at least this much
 * to the base format (a few packages beyond the class) saves more than that costs.
 */
export const MIN_GAIN_BYTES = 64 * 1024;

export type BuildOutcome = { entry: FormatEntry } | { rejected: string };

/** `run`: one command in the build sandbox under its limits. */
export async function buildFormat(run: (argv: string[]) => Promise<Exec>, workspace: Workspace, input: BuildInput): Promise<BuildOutcome> {
  const epoch = Math.floor(Date.parse(`${input.day}T12:00:00Z`) / 1000);
  if (!Number.isFinite(epoch)) return { rejected: 'no day' };
  const dated = ['env', `SOURCE_DATE_EPOCH=${epoch}`, 'FORCE_SOURCE_DATE=1'];
  const aside = (argv: string[]) => ['sh', '-c', '"$@"; rc=$?; mv -f main.pdf f.pdf && mv -f main.log f.log || exit 9; exit $rc', 'sh', ...argv];

  if ((await run([...dated, 'pdflatex', ...FLAGS, 'main.tex'])).code !== 0) return { rejected: 'the cold pass failed' };
  const dump = await run(['pdftex', '-ini', `-jobname=${BUILD}`, '-recorder', '-no-shell-escape', '-halt-on-error', '&pdflatex', `${BEFORE_DUMP}\\input mylatexformat.ltx main.tex`]);
  if (dump.code !== 0) return { rejected: 'the dump failed' };
  const dumpLog = (await workspace.readLog(`${BUILD}.log`)) ?? '';
  if (/^! /m.test(dumpLog)) return { rejected: 'the dump reported an error' };

  // The recorder: the dump wrote only its format and transcript, and read, inside the
  // workspace, only main.tex and the job's own files (never something a pass writes).
  const fls = (await workspace.readCapped(`${BUILD}.fls`, FLS_CAP))?.toString('utf8');
  if (!fls) return { rejected: 'no recorder file' };
  const byName = new Map(input.files.map((file) => [file.name, file.data]));
  const reads = new Map<string, string>();
  for (const line of fls.split('\n')) {
    const match = /^(INPUT|OUTPUT) (.+)$/.exec(line);
    if (!match) continue;
    const name = match[2]!.replace(/^(\.\/)+/, '');
    if (match[1] === 'OUTPUT') {
      if (name !== `${BUILD}.fmt` && name !== `${BUILD}.log`) return { rejected: `the preamble wrote ${name}` };
      continue;
    }
    if (name.startsWith('/') || name === 'main.tex') continue;
    const data = byName.get(name);
    if (!data) return { rejected: `the preamble read ${name}, which is not a job file` };
    reads.set(name, sha256(data));
  }

  const formatPass = [...dated, 'sh', '-c', 'echo | exec "$@"', 'sh', 'pdflatex', `-fmt=${BUILD}`, '-progname=pdflatex', ...FLAGS.filter((f) => !f.startsWith('-interaction')), '-jobname=main', FORMAT_FIRST_LINE];
  if ((await run(aside(formatPass))).code !== 0) return { rejected: 'the pass with the format failed' };
  const writtenWithFormat = await run(WRITTEN);
  if ((await run([...dated, 'pdflatex', ...FLAGS, 'main.tex'])).code !== 0) return { rejected: 'the second cold pass failed' };
  // mylatexformat defers a preamble's \openout to each job, and a \write before it goes nowhere:
  // every file a pass leaves (but its PDF, transcript and recorder) must be the cold pass's.
  const writtenCold = await run(WRITTEN);
  if (writtenWithFormat.code !== 0 || writtenCold.code !== 0 || writtenWithFormat.output !== writtenCold.output || writtenCold.output.length > 60_000) {
    return { rejected: 'the files it writes differ from a cold compile' };
  }
  const compare = await run([
    'sh',
    '-c',
    'for f in f.pdf main.pdf; do qpdf --show-npages "$f" || echo FAILED; { pdftoppm -r 50 "$f" || echo FAILED >&2; } | sha256sum; { pdftotext -q "$f" - || echo FAILED >&2; } | sha256sum; done',
  ]);
  const lines = compare.output.trim().split('\n');
  if (compare.code !== 0 || lines.length !== 6 || compare.output.includes('FAILED')) return { rejected: 'the PDFs could not be compared' };
  if (lines.slice(0, 3).join('\n') !== lines.slice(3).join('\n')) return { rejected: 'the pages differ from a cold compile' };
  const [withFormat, cold] = await Promise.all([workspace.readLog('f.log'), workspace.readLog('main.log')]);
  if (withFormat === null || cold === null) return { rejected: 'a transcript is missing' };
  const warnings = (log: string) => JSON.stringify(collectWarnings(log, null, 'pdflatex', []));
  if (warnings(withFormat) !== warnings(cold)) return { rejected: 'the warnings differ from a cold compile' };

  const fmt = await workspace.read(`${BUILD}.fmt`, FORMAT_CAP);
  if (fmt === 'over') return { rejected: 'the format is over the cap' };
  if (!fmt) return { rejected: 'no format' };
  if (fmt.length - input.baseBytes < MIN_GAIN_BYTES) return { rejected: 'the preamble is too light to gain from a format' };
  return { entry: { fmt, reads, present: new Set(byName.keys()) } };
}
