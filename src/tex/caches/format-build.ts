// Builds and verifies one preamble format, in a fresh sandbox holding a copy of the job that
// asked for it (inBuildSandbox, opened by preamble-cache.ts with the job's files). In order: a cold
// pass (so the files a later pass finds, .aux and .toc, exist while the preamble is dumped),
// the dump (pdftex -ini with mylatexformat, recorded: it may read no job file and main.tex
// only once, for mylatexformat itself), a pass with the format, a cold pass, and the
// comparison of the two: same page count, same page renderings (pdftoppm), same text
// (pdftotext), same warnings. Then the same comparison for a second document, the same
// preamble with another body (other text on every line, another page count): a format that
// carried anything of the first body into a later job fails it. Any doubt rejects the
// format; nothing is retried.
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { FontMaps } from './font-map.js';
import { sha256, type FormatEntry } from './format-cache.js';
import { FORMAT_FIRST_LINE, SHELL_ESCAPE, type TexJob } from '../job.js';
import { measure, workspaceOf } from '../pass-loop.js';
import { prepareWorkspace } from '../runner.js';
import type { SandboxPool } from '../sandbox/pool.js';
import { SANDBOX_WORKDIR, type ProcessLimits } from '../sandbox/sandbox.js';
import type { Exec } from '../sandbox/session.js';
import { collectWarnings } from '../warnings.js';
import type { Workspace } from '../sandbox/workspace.js';
import { conformanceChecks, structureSignature } from '../output/conformance.js';
import { MODEL_JSON_MAX, PdfModel } from '../output/pdf-model.js';
import type { OutputTagging } from '../output/spec.js';

/** The dump's job name in the build sandbox (jobs see the format under another name). */
const BUILD = 'quirepre';
/** Largest format kept, as pdfTeX dumps it (gzip-compressed). */
export const FORMAT_CAP = 64 * 1024 * 1024;
/** Largest format kept once inflated. */
export const INFLATED_CAP = 192 * 1024 * 1024;
const FLS_CAP = 4 * 1024 * 1024;
const FLAGS = [SHELL_ESCAPE, '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder'];
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

/**
 * A tagged preamble's dump point (issue 40). mylatexformat stops the dump at \begin{document}
 * by patching \begin, but the kernel's tagging code (latex-lab's block module, loaded by
 * \DocumentMetadata) defines \begin anew, so the preamble would run on into the body. The
 * kernel's \begin opens with the env/document/before hook, outside any group as mylatexformat's
 * stop is: there this hook dumps, once (mylatexformat's \endofdump is \relax once it ran, in the
 * format too, so a job's \begin{document} passes by), and mylatexformat's cleanup leaves the
 * kernel's \begin alone (it would look for its own patch in it).
 */
const TAGGED_DUMP_POINT = String.raw`\expandafter\def\csname MYLATEX@quirecleanup\endcsname{\expandafter\let\expandafter\openout\csname MYLATEX@openout\endcsname}\expandafter\def\csname MYLATEX@quirestop\endcsname{\ifx\endofdump\relax\else\expandafter\let\csname MYLATEX@cleanup\expandafter\endcsname\csname MYLATEX@quirecleanup\endcsname\expandafter\endofdump\fi}\AddToHook{env/document/before}{\csname MYLATEX@quirestop\endcsname}`;

/**
 * The l3 kernel's constants of the job (\c_sys_timestamp_str, the time and date integers,
 * \c_sys_jobname_str) are made once per run by \everyjob: a format kept the dump's time, which
 * pdfmanagement writes into the XMP dates and InstanceID and packages print or compare (datatool,
 * pdfcomment, xsim), so the format's \everyjob makes them anew, tagged or not. (Untagged formats
 * kept it until 2026-12-06; their builds then refused a document that shows it: the pages differ.)
 */
const JOB_CONSTANTS = String.raw`\csname MYLATEX@quirejob\endcsname\expandafter{\the\csname MYLATEX@quirejob\endcsname\expandafter\xdef\csname c_sys_jobname_str\endcsname{\jobname}\expandafter\xdef\csname c_sys_timestamp_str\endcsname{\pdfcreationdate}\global\expandafter\mathchardef\csname c_sys_hour_int\endcsname=\numexpr(\time-30)/60\relax\global\expandafter\mathchardef\csname c_sys_minute_int\endcsname=\numexpr\time-60*\csname c_sys_hour_int\endcsname\relax\global\expandafter\mathchardef\csname c_sys_day_int\endcsname=\day\global\expandafter\mathchardef\csname c_sys_month_int\endcsname=\month\global\expandafter\mathchardef\csname c_sys_year_int\endcsname=\year}`;

/** The hash of every file in the workspace but PDFs, transcripts, recorder files and the format. */
const WRITTEN = ['sh', '-c', `find . -type f ! -name '*.pdf' ! -name '*.log' ! -name '*.fls' ! -name '${BUILD}.*' -exec sha256sum {} + | LC_ALL=C sort`];

export interface BuildInput {
  source: string;
  files: ReadonlyArray<{ name: string; data: Buffer }>;
  /** YYYY-MM-DD: the verification passes run at noon of that day (SOURCE_DATE_EPOCH), so both see one date. */
  day: string;
  /** Size of the base format (pdflatex.fmt): a format barely larger holds a preamble too light to gain from it. */
  baseBytes: number;
  /** Lines of main.tex before its \begin{document} line: the preamble (preamble.ts splitPreamble). */
  preambleLines: number;
  /** The core font map's split (font-map.ts): whether the format's engines may read the core map. */
  fontMaps?: FontMaps | undefined;
  /** A tagged job's tagging (issue 40): the passes compared must also have one structure tree, XMP and conformance report. */
  tagging?: OutputTagging | undefined;
}

/**
 * A job with a format gives up the slot's warm engine (its base format loaded ahead of time)
 * and loads the format on the request's path: only a preamble that adds at least this much
 * to the base format (a few packages beyond the class) saves more than that costs.
 */
export const MIN_GAIN_BYTES = 64 * 1024;
/** Nonce lines the second document puts before the first body at most (a preamble reading further is caught by the recorder). */
const VARIANT_LINES = 20_000;

export type BuildOutcome = { entry: FormatEntry } | { rejected: string };

/** One command in a build sandbox, under the limits it was opened with. */
export type SandboxRun = (argv: string[]) => Promise<Exec>;

/**
 * `work` in a new sandbox of `pool` on `uid` holding a copy of `job` (no warm engine, no
 * deadline of its own): each command under `limits`, the workspace as a whole capped at
 * `diskBytes` (past it, the command's promise rejects). `signal` kills the sandbox.
 */
export async function inBuildSandbox<T>(
  pool: SandboxPool,
  job: TexJob,
  uid: number | undefined,
  limits: ProcessLimits,
  diskBytes: number,
  signal: AbortSignal,
  work: (run: SandboxRun, workspace: Workspace) => Promise<T>,
): Promise<T> {
  const session = await pool.open(uid);
  const kill = () => session.kill();
  signal.addEventListener('abort', kill, { once: true });
  if (signal.aborted) kill();
  try {
    await prepareWorkspace(session, job);
    const workspace = workspaceOf(session);
    return await work(async (argv) => {
      const result = await session.run(pool.command(session, argv, limits));
      const { total, overflow } = await measure(workspace);
      if (overflow || total > diskBytes) throw new Error('the build filled its workspace');
      return result;
    }, workspace);
  } finally {
    signal.removeEventListener('abort', kill);
    await session.close();
  }
}

/** `run`: one command in the build sandbox under its limits. */
export async function buildFormat(run: SandboxRun, workspace: Workspace, input: BuildInput): Promise<BuildOutcome> {
  const epoch = Math.floor(Date.parse(`${input.day}T12:00:00Z`) / 1000);
  if (!Number.isFinite(epoch)) return { rejected: 'no day' };
  const dated = ['env', `SOURCE_DATE_EPOCH=${epoch}`, 'FORCE_SOURCE_DATE=1'];
  const coldPass = [...dated, 'pdflatex', ...FLAGS, 'main.tex'];

  if ((await run(coldPass)).code !== 0) return { rejected: 'the cold pass failed' };
  // The body may write files (\openout main.tex among them): the dump must read the job's own source.
  const mainHash = await run(['sha256sum', 'main.tex']);
  if (mainHash.code !== 0 || mainHash.output.split(/\s/)[0] !== sha256(Buffer.from(input.source, 'utf8'))) return { rejected: 'the document rewrote main.tex' };
  const dump = await run(['pdftex', '-ini', `-jobname=${BUILD}`, '-recorder', SHELL_ESCAPE, '-halt-on-error', '&pdflatex', `${BEFORE_DUMP}${JOB_CONSTANTS}${input.tagging ? TAGGED_DUMP_POINT : ''}\\input mylatexformat.ltx main.tex`]);
  if (dump.code !== 0) return { rejected: 'the dump failed' };
  const dumpLog = (await workspace.readLog(`${BUILD}.log`)) ?? '';
  if (/^! /m.test(dumpLog)) return { rejected: 'the dump reported an error' };
  // A program the preamble ran through the restricted shell escape (runsystem) reads and writes
  // beyond the recorder's sight, and its files would be missing beside a later job's format.
  if (/runsystem\(/.test(dumpLog)) return { rejected: 'the preamble ran a shell command' };

  // The recorder: the dump wrote only its format and transcript, and read nothing in the
  // workspace but main.tex, once (mylatexformat's own read). A second read of main.tex (\openin,
  // \pdffiledump, \input), a job file or a file a pass wrote would put one document's bytes
  // into every later job's format.
  const fls = (await workspace.readCapped(`${BUILD}.fls`, FLS_CAP))?.toString('utf8');
  if (!fls) return { rejected: 'no recorder file' };
  const jobFiles = new Set(input.files.map((file) => file.name));
  const roots = [`${SANDBOX_WORKDIR}/`, `${workspace.dir}/`];
  let mainReads = 0;
  for (const line of fls.split('\n')) {
    const match = /^(INPUT|OUTPUT) (.+)$/.exec(line);
    if (!match) continue;
    const root = roots.find((prefix) => match[2]!.startsWith(prefix));
    const name = (root ? match[2]!.slice(root.length) : match[2]!).replace(/^(\.\/)+/, '');
    if (match[1] === 'OUTPUT') {
      if (name !== `${BUILD}.fmt` && name !== `${BUILD}.log`) return { rejected: `the preamble wrote ${name}` };
      continue;
    }
    if (name.startsWith('/')) continue;
    if (name === 'main.tex' && ++mainReads === 1) continue;
    return { rejected: `the preamble read ${name}${jobFiles.has(name) ? ', a job file' : name === 'main.tex' ? '' : ', which is not a job file'}` };
  }

  const first = await compareWithCold(run, workspace, dated, coldPass, input.tagging);
  if ('rejected' in first) return first;

  // The second document: the same preamble, then a page of its own, then as many lines as the
  // first body has, each with a fresh nonce, then the first body itself. Every line a preamble
  // could read of the first body is another line here, while the body that shows what it read
  // still follows; so a format holding anything of the first body gives another PDF than a
  // cold pass does. The preamble is main.tex's first lines (checked above to be the job's
  // source); no job file's name starts with "main.".
  const nonce = randomBytes(8).toString('hex');
  const bodyLines = Math.min(VARIANT_LINES, input.source.split('\n').length - input.preambleLines + 1);
  const variant = await run([
    'sh',
    '-c',
    // One line: the sandbox's driver reads a command a line.
    String.raw`head -n "$1" main.tex > main.quirevariant || exit 9; { printf '%s\n%s\n' "$2" "$3"; i=0; while [ $i -lt "$4" ]; do printf '%s%s%s\n' "$5" $i "$6"; i=$((i+1)); done; tail -n +"$(($1 + 1))" main.tex | sed '1s/^[[:space:]]*\\begin{document}//'; } >> main.quirevariant && mv -f main.quirevariant main.tex`,
    'sh',
    String(input.preambleLines),
    String.raw`\begin{document}%` + nonce,
    String.raw`Quire check ${nonce}.\par\clearpage`,
    String(bodyLines),
    String.raw`\iffalse ${nonce} `,
    String.raw`\fi`,
  ]);
  if (variant.code !== 0) return { rejected: 'the second document could not be written' };
  // A cold pass first, so the files it writes (.aux, .toc) are the second document's for both compared passes.
  if ((await run(coldPass)).code !== 0) return { rejected: 'the second document failed cold' };
  const second = await compareWithCold(run, workspace, dated, coldPass, input.tagging);
  if ('rejected' in second) return { rejected: `the second document: ${second.rejected}` };
  if (second.pages === first.pages) return { rejected: 'the second document has the page count of the first' };

  const fmt = await workspace.read(`${BUILD}.fmt`, FORMAT_CAP);
  if (fmt === 'over') return { rejected: 'the format is over the cap' };
  if (!fmt) return { rejected: 'no format' };
  if (fmt.length - input.baseBytes < MIN_GAIN_BYTES) return { rejected: 'the preamble is too light to gain from a format' };
  const inflated = await inflateFormat(fmt);
  if (!inflated) return { rejected: 'the format does not inflate within the cap' };
  // The fonts the preamble loaded are in the format, their metrics never opened again by a job:
  // its engines read the core map only when the dump opened no font that map lacks.
  const coreMap = input.fontMaps !== undefined && !input.fontMaps.needsWholeMap(fls);
  return { entry: { fmt: inflated, present: jobFiles, coreMap } };
}

const gunzipAsync = promisify(gunzip);

/**
 * The format as every pass of a job loads it: pdfTeX dumps it gzip-compressed and would
 * inflate it again on each pass (about a third of a pass with a heavy preamble; formats.ts
 * did the same for the base formats). zlib's gzread passes an uncompressed format through, so
 * the engine reads the inflated bytes unchanged. Null when it does not inflate within the cap.
 */
export async function inflateFormat(fmt: Buffer): Promise<Buffer | null> {
  if (fmt[0] !== 0x1f || fmt[1] !== 0x8b) return fmt;
  return gunzipAsync(fmt, { maxOutputLength: INFLATED_CAP }).catch(() => null);
}

/**
 * A pass of main.tex with the format (its PDF and transcript moved aside), then a cold pass:
 * the files each leaves, its pages, text and warnings must be the same. Gives the page count.
 */
async function compareWithCold(
  run: (argv: string[]) => Promise<Exec>,
  workspace: Workspace,
  dated: string[],
  coldPass: string[],
  tagging?: OutputTagging,
): Promise<{ pages: number } | { rejected: string }> {
  const aside = (argv: string[]) => ['sh', '-c', '"$@"; rc=$?; mv -f main.pdf f.pdf && mv -f main.log f.log || exit 9; exit $rc', 'sh', ...argv];
  const formatPass = [...dated, 'sh', '-c', 'echo | exec "$@"', 'sh', 'pdflatex', `-fmt=${BUILD}`, '-progname=pdflatex', ...FLAGS.filter((f) => !f.startsWith('-interaction')), '-jobname=main', FORMAT_FIRST_LINE];
  if ((await run(aside(formatPass))).code !== 0) return { rejected: 'the pass with the format failed' };
  const writtenWithFormat = await run(WRITTEN);
  if ((await run(coldPass)).code !== 0) return { rejected: 'the second cold pass failed' };
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
  if (tagging) {
    const [a, b] = [await taggedFacts(run, workspace, 'f.pdf', tagging), await taggedFacts(run, workspace, 'main.pdf', tagging)];
    if (a === null || b === null) return { rejected: 'the tagged PDFs could not be read' };
    if (a.structure !== b.structure) return { rejected: 'the structure tree differs from a cold compile' };
    // Both passes ran at one SOURCE_DATE_EPOCH (the dump did not): a date, or an id made from
    // one, that the dump kept in the format shows here.
    if (a.xmp !== b.xmp) return { rejected: 'the XMP metadata differs from a cold compile' };
    if (a.report !== b.report) return { rejected: 'the conformance checks differ from a cold compile' };
  }
  return { pages: Number(lines[3]) };
}

/**
 * What a tagged PDF in the build's workspace is compared on: its structure tree (conformance.ts
 * structureSignature), its XMP packet and the conformance checks the job's answer would carry,
 * read by qpdf and pdfinfo in the build sandbox as a job's output step reads them.
 */
async function taggedFacts(run: SandboxRun, workspace: Workspace, pdf: string, tagging: OutputTagging): Promise<{ structure: string; xmp: string; report: string } | null> {
  const read = await run(['sh', '-c', `qpdf --json=2 --json-key=qpdf "$1" >${BUILD}.json 2>/dev/null; rc=$?; pdfinfo -meta "$1" >${BUILD}.xmp || exit 9; exit $rc`, 'sh', pdf]);
  if (read.code !== 0 && read.code !== 3) return null;
  const [json, xmp] = [await workspace.read(`${BUILD}.json`, MODEL_JSON_MAX), await workspace.read(`${BUILD}.xmp`, FLS_CAP)];
  const model = json instanceof Buffer ? PdfModel.parse(json.toString('utf8')) : null;
  if (!model || !(xmp instanceof Buffer)) return null;
  const checks = conformanceChecks(model, xmp.toString('utf8'), { ua: tagging.ua, tagged: true });
  return { structure: structureSignature(model), xmp: xmp.toString('utf8'), report: JSON.stringify(checks) };
}
