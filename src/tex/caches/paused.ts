// A paused preamble (xelatex, lualatex): a TeX process that has run a document's preamble and
// waits on its terminal for the go-line, in a fresh sandbox whose workspace then receives the
// job (main.tex and its files) before that line is written. What the process reads, how it
// skips the preamble of main.tex afterwards, and which documents and files may use one.
// The layer that keeps and hands them out is paused-cache.ts.
import { lchown, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Compiler } from '../compilers.js';
import { LUA_AHEAD, outputDriverArgs, SHELL_ESCAPE } from '../job.js';
import { LUA_INIT } from '../sandbox/luainit.js';
import { refusal } from './preamble.js';
import type { SandboxPool } from '../sandbox/pool.js';
import type { Session } from '../sandbox/session.js';
import { MAIN } from '../sandbox/workspace.js';

/** The preamble's bytes, and the driver TeX reads first (ours: reserved for the job, project/paths.ts). */
export const PAUSED_PREAMBLE = `${MAIN}.pre.tex`;
export const PAUSED_DRIVER = `${MAIN}.pause.tex`;
/** The session's name for a paused engine (session.ts). */
export const PAUSED_ENGINE = 'paused';

/**
 * The driver. The preamble runs in nonstopmode (an error ends the process: -halt-on-error);
 * then in scrollmode (the lowest mode that may read the terminal) TeX waits for one line, the
 * go-line, which sets the job's time and date (the process started earlier). Then it reads
 * main.tex from its first line, exactly as a cold pass does, so its lines and errors are
 * numbered as there: a group makes every character of the preamble ignored (catcode 9) and
 * the end of line active, counting `lines` lines; the last one ends the group, and the
 * `\begin{document}` line is read with the document's own catcodes. The macros that do it
 * are defined before their catcodes apply (TeX assigns catcodes as it reads each character).
 */
export function pausedDriver(preamble: string, lines: number, compiler: Compiler): string {
  const chars = [...new Set([...preamble].map((ch) => ch.codePointAt(0)!))].filter((code) => code !== 10).sort((a, b) => a - b);
  const ignore = chars.map((code) => `\\catcode${code}=9 `).join('');
  const input = (name: string) => (compiler === 'lualatex' ? `\\input{${name}}` : `\\csname @@input\\endcsname ${name} `);
  return [
    `${input(PAUSED_PREAMBLE)}%`,
    String.raw`\scrollmode\read-1 to\quirego\nonstopmode\quirego\let\quirego\undefined%`,
    String.raw`\begingroup\lccode` + '`' + String.raw`\~=13 \lowercase{\endgroup\def\quireskip{\begingroup\let~\quireeol ` + ignore + String.raw`\catcode13=13 }}%`,
    String.raw`\def\quireeol{\edef\quiren{\the\numexpr\quiren-1}\ifnum\quiren=0 \endgroup\let\quireeol\undefined\let\quireskip\undefined\let\quiren\undefined\fi}%`,
    `\\def\\quiren{${lines}}%`,
    `\\def\\quirestart{\\let\\quirestart\\undefined\\quireskip${input(`${MAIN}.tex`)}}\\quirestart`,
    '',
  ].join('\n');
}

/**
 * The paused engine's command line: the flags of engineArgs (job.ts), the driver as the first
 * file, -jobname=main. It reads nothing of the job before its go-line. `warmPdf`: as in
 * warmEngineArgs (job.ts).
 */
export function pausedEngineArgs(compiler: Compiler, fmt: string[] = [], warmPdf = false): string[] {
  const common = [...fmt, ...outputDriverArgs(compiler, warmPdf), SHELL_ESCAPE, '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder', `-jobname=${MAIN}`];
  // lualatex reads the font map and defines Latin Modern before the preamble, as a warm engine
  // does before its wait (job.ts): a one-pager's first page would read the map (about 90 ms of
  // a paused hello's 180 ms) and its \begin{document} load the font.
  if (compiler === 'lualatex') return ['lualatex', '--nosocket', ...common, `\\directlua{${LUA_INIT}}${LUA_AHEAD}\\input{${PAUSED_DRIVER}}`];
  return [compiler, ...common, PAUSED_DRIVER];
}

/** The go-line: the job's time of day and date (UTC, as a cold pass in the sandbox sees them). */
export function goLine(now: Date): string {
  return `\\time=${now.getUTCHours() * 60 + now.getUTCMinutes()} \\day=${now.getUTCDate()} \\month=${now.getUTCMonth() + 1} \\year=${now.getUTCFullYear()} `;
}

/**
 * Beyond what the format cache refuses (preamble.ts): anything by which a preamble could read
 * a file of the job (the paused sandbox holds none of them while the preamble runs), Lua,
 * input encodings, and line ends TeX and the split count differently.
 */
const READS = /\\(?:openin|read|readline|input|include|InputIfFileExists|IfFileExists|includegraphics|lstinputlisting|verbatiminput|directlua|luaexec|latelua|luadirect|scantokens|XeTeXinputencoding|XeTeXdefaultencoding|addbibresource|bibliography)\b|\{luacode\*?\}|Path\s*=/;

/** Why a preamble is not paused, or null. `jobFiles`: the names of the job's files. */
export function pausedRefusal(preamble: string, jobFiles: ReadonlyArray<string> = []): string | null {
  if (/[\r\u2028\u2029]/.test(preamble)) return 'line ends other than LF';
  if (READS.test(preamble)) return 'it may read files of the job';
  return refusal(preamble, jobFiles);
}

/**
 * Job files a paused preamble cannot have looked for: the body's assets and inputs. A file a
 * package might look for while the preamble runs (a .cfg, .sty, .fd, a font) makes the job
 * run cold, since the paused preamble ran without it.
 */
const BODY_FILES = /\.(?:tex|bib|png|jpe?g|pdf|eps|svg|csv|dat|txt)$/i;

export function bodyFilesOnly(files: ReadonlyArray<{ name: string }>): boolean {
  return files.every((file) => BODY_FILES.test(file.name));
}

/**
 * A fresh sandbox of `pool` on `uid` whose `compiler` runs `preamble` (its first `lines` lines
 * of main.tex) and waits for the go-line: the session a job runs from (JobStart "paused"),
 * once. `files` (the output step's .xmpdata) are in the sandbox before the preamble runs.
 */
export async function pauseSandbox(
  pool: SandboxPool,
  uid: number | undefined,
  compiler: Compiler,
  preamble: string,
  lines: number,
  files: ReadonlyArray<{ name: string; data: Buffer }> = [],
): Promise<Session> {
  const session = await pool.openFor(uid, compiler);
  try {
    for (const [name, text] of [
      [PAUSED_PREAMBLE, preamble],
      [PAUSED_DRIVER, pausedDriver(preamble, lines, compiler)],
      ...files.map((file) => [file.name, file.data] as const),
    ] as const) {
      await writeFile(join(session.dir, name), text, { flag: 'wx' });
      if (session.uid !== undefined) await lchown(join(session.dir, name), session.uid, session.uid);
    }
    const pdf = pool.warmPdf(compiler);
    await session.startEngine(PAUSED_ENGINE, pool.command(session, pausedEngineArgs(compiler, pool.fmt(session, compiler), pdf !== undefined)), pdf && pool.command(session, pdf));
    return session;
  } catch (err) {
    await pool.discard(session, true);
    throw err;
  }
}
