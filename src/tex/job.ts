// The TeX job contract at the bottom of tex/: what a caller hands over (TexJob), what it gets
// back (TexResult), the limits every command of a job runs under, the engines' command lines,
// and the one seam every layer of job running implements (JobRunner): the runner, the
// preamble cache around it, and the queues above them.
import type { Compiler } from './compilers.js';
import { LUA_INIT } from './sandbox/luainit.js';
import type { ConformanceReport } from './output/conformance.js';
import type { OutputSpec, PageImage } from './output/spec.js';
import type { TexError, TexWarning } from './warnings.js';
import { MAIN } from './sandbox/workspace.js';

/** Where the preamble cache may look: the job's scope and the UTC day, both set by the compile service. */
export interface PreambleScope {
  /** `account:<id>`, `anonymous:<ip>` or `gallery` (public gallery renders share one pool). */
  scope: string;
  /** YYYY-MM-DD (UTC): a preamble may capture the date. */
  day: string;
}

export interface TexJob {
  source: string;
  compiler: Compiler;
  /** `blob`: where these exact bytes already are in the shared blob store (a stored asset), so a remote worker can fetch them instead of receiving a copy. */
  files?: ReadonlyArray<{ name: string; data: Buffer; blob?: string }>;
  timeoutMs: number;
  /**
   * CPU seconds each pass may use; by default the timeout's. Diagnosis probes set it (and a
   * generous timeout) so that their verdict depends on the work, not on the machine's load.
   */
  cpuSeconds?: number;
  /** Largest file (the PDF included) the job may write. */
  maxFileBytes: number;
  /** When the PDF has more pages, deliver only the first `keepPages` (a preview). */
  keepPages?: number;
  signal?: AbortSignal;
  /** Where the preamble cache may look (pdflatex only); without it the job never uses or builds a format. */
  preamble?: PreambleScope;
  /** TeX passes at most (a diagnosis probe needs one); the runner's own cap when absent. */
  maxPasses?: number;
  /** Whose job it is and whether someone waits on it: queues serve callers in turn, interactive jobs first. */
  fairness?: JobFairness;
  /** What is done to the PDF before delivery (PDF/A, metadata, encryption, page images, …; issue 23). */
  output?: OutputSpec;
  /** The TeX Live year whose image runs the job (the queue's default when absent). */
  texlive?: string;
  /**
   * TeX goes on past errors (no -halt-on-error, as Overleaf's "try to compile despite
   * errors"): a PDF it still writes is delivered with `errors`. Runs cold (no warm engine,
   * format or paused preamble: those are started with -halt-on-error).
   */
  continueOnError?: boolean;
}

export interface JobFairness {
  /** `account:<id>` or `anon:<ip>`. */
  caller: string;
  /** An async job or batch item: served after every waiting interactive job. */
  background: boolean;
  /** Once it runs long, the job yields the CPU to other jobs (keyless and Free callers; see demote.ts). */
  yields?: boolean;
}

/**
 * `unmeasurable`: TeX wrote a PDF but its pages and size could not be read back.
 * `refused`: the job left something other than the plain files a TeX run writes (a link, a
 * FIFO, a directory, a hard link, thousands of files) where the service reads; see `problem`.
 * `active_content`: the PDF carries JavaScript, a Launch action or a script URI; see `problem`.
 * `standard_failed`: the PDF does not meet the job's `output.pdf_standard`; see `reasons`.
 * `output_failed`: a tool of the output step refused the PDF; see `reasons`.
 */
export type TexOutcome = 'ok' | 'failed' | 'timeout' | 'file_too_large' | 'unmeasurable' | 'refused' | 'active_content' | 'standard_failed' | 'output_failed';

export interface TexResult {
  outcome: TexOutcome;
  /** The PDF when outcome is ok: the whole document, or its first `keepPages` pages. */
  pdf?: Buffer;
  /** Pages in `pdf`. */
  pages?: number;
  /** Pages of the whole document. */
  totalPages?: number;
  /** TeX's transcript (main.log), plus the output of a failing helper. */
  log: string;
  passes: number;
  durationMs: number;
  /** With file_too_large: the file that hit the cap. */
  file?: string;
  /** With refused and active_content: what was wrong, in words for the caller. */
  problem?: string;
  /** With ok: problems that did not stop delivery (undefined references, bibliography errors, …). */
  warnings?: TexWarning[];
  /** With ok and a PDF standard or tagging asked for: the checks that ran on the PDF (issue 40). */
  conformance?: ConformanceReport;
  /** With ok and continueOnError: the errors TeX recovered from on its last pass. */
  errors?: TexError[];
  /** Where the job's time went, in milliseconds (the service's stage histograms, the bench's table). */
  stages?: TexStages;
  /** With standard_failed and output_failed: the validator's or the tool's reasons. */
  reasons?: string[];
  /** With ok and `output.pageImages`: the rendered pages. */
  pageImages?: PageImage[];
  /** `paused`: the first pass was a paused preamble's (paused-cache.ts), given only the body. */
  warm?: 'paused';
}

/**
 * A job's stages: `sandbox` (taking a warm sandbox, writing the job's files), `tex` (engine
 * passes and helpers), `inspect` (page count and active content), `reads` (reading back what
 * TeX wrote between and after passes), `cleanup` (handing the sandbox back), `fontmap` (a
 * first attempt with the core font map, given up for the whole map; font-map.ts).
 */
export type TexStage = 'sandbox' | 'tex' | 'inspect' | 'reads' | 'cleanup' | 'fontmap';
export type TexStages = Partial<Record<TexStage, number>>;

/** Runs TeX jobs: the runner itself, or a layer around it (the preamble cache). */
export interface JobRunner {
  /** Runs `job` as `uid` (an unprivileged id when the service runs as root). */
  run(job: TexJob, uid?: number): Promise<TexResult>;
  /**
   * Prepares the work root and sweeps the workspaces of services that died, before any job
   * runs; resolves to the swept folders. Runs once.
   */
  start(): Promise<string[]>;
  /** Ends the warm sandboxes and any work in the background (service shutdown). */
  close(): Promise<void>;
}

/** Address space per process: enough for lualatex with large OpenType fonts. */
export const MEMORY_BYTES = 4 * 1024 ** 3;
/** Processes per job (xelatex spawns xdvipdfmx; the rest spawn nothing). */
export const PROCESSES = 32;
/** CPU seconds a warm engine gets on top of the job's, for loading its format ahead of time. */
export const WARM_CPU_SECONDS = 2;
/** CPU seconds a paused preamble (paused.ts) gets on top of the job's: it ran the preamble ahead of time. */
export const PAUSED_CPU_SECONDS = 10;

/**
 * A cached preamble format in a job's workspace: a dot name no job file can have and TeX
 * (openout_any=p) cannot write. The warm engine that loads it is named FORMAT_ENGINE.
 */
export const FORMAT = '.quire-pre';
export const FORMAT_ENGINE = 'pdflatex+preamble';

/**
 * pdfTeX reads its font map (pdftex.map: 5.6 MB, 46,000 lines in TeX Live 2026) when the first
 * page goes out, about 100 ms of parsing; an empty map line makes it read the map at once, so
 * a warm engine does it before its wait. The document sees the same map (the empty line adds
 * nothing) and the PDF is byte-identical; only the map's name moves from the transcript to the
 * terminal.
 */
const LOAD_FONT_MAP = String.raw`\pdfmapline{+}`;
/** The same with the core font map (font-map.ts) instead of pdftex.map: `path` as the sandbox sees it. */
const loadCoreMap = (path: string) => String.raw`\pdfmapfile{${path}}\pdfmapline{+}`;
/** The same for LuaTeX, which reads pdftex.map at its first page too. */
const LUA_LOAD_FONT_MAP = String.raw`\pdfextension mapline{+}`;

/**
 * lualatex's first font (Latin Modern through luaotfload: its names database and font cache)
 * costs a pass 25–35 ms where the document first selects it (\documentclass); a warm engine
 * defines it, the same name and size the TU encoding's Latin Modern gives, before its wait,
 * and luaotfload gives the document's load the font it already holds. Defining it logs
 * (luaotfload reports the database at level 0), which opens main.log: the engine the driver
 * starts for a second pass while the first runs (QUIRE_AGAIN in its environment, session.ts)
 * skips it, or it would truncate the first pass's transcript.
 */
const LUA_PRELOAD_FONT = String.raw`\ifnum\directlua{tex.write(os.getenv('QUIRE_AGAIN') and 1 or 0)}=0 \edef\x{\UnicodeFontFile{lmroman10-regular}{\UnicodeFontTeXLigatures}}\font\quirepreload=\x\space at 10pt \let\quirepreload\undefined\let\x\undefined\fi`;

/** What a lualatex engine started ahead of time does before its wait: the map and the first font (above). */
export const LUA_AHEAD = `${LUA_LOAD_FONT_MAP}${LUA_PRELOAD_FONT}`;

/**
 * A job's first line with a preamble format (see format-build.ts): wait for a terminal line,
 * then open main.tex and skip its preamble.
 */
export const FORMAT_FIRST_LINE = String.raw`\read16 to\x \let\x\undefined\nonstopmode\csname MYLATEX@quirescan\expandafter\expandafter\expandafter\endcsname\csname @@input\endcsname ${MAIN}.tex `;

/**
 * TeX Live's restricted shell escape: \write18, \input|"…" and lualatex's os.execute/io.popen
 * run only the programs of `shell_escape_commands` in the image's texmf.cnf (minted 3's
 * latexminted, repstopdf, bibtex, makeindex, kpsewhich, …), inside the job's sandbox and
 * limits; anything else is refused by the engine. Every engine of a job, warm, paused or with
 * a preamble format, and the format's dump, runs with this one flag (docs/security-sandbox.md).
 */
export const SHELL_ESCAPE = '-shell-restricted';

/**
 * Engine flags: restricted shell escape, no interaction, stop at the first error (unless the job
 * goes on past errors: continueOnError), record files.
 * `fmt`: the engine's flag for an inflated copy of its format (formats.ts), when there is one.
 */
export function engineArgs(compiler: Compiler, hardenLua = true, fmt: string[] = [], haltOnError = true): string[] {
  const common = [...fmt, SHELL_ESCAPE, '-interaction=nonstopmode', ...(haltOnError ? ['-halt-on-error'] : []), '-file-line-error', '-recorder'];
  if (compiler !== 'lualatex') return [compiler, ...common, `${MAIN}.tex`];
  // lualatex first runs LUA_INIT (no link creation, no renaming), then reads the document.
  if (hardenLua) return ['lualatex', '--nosocket', ...common, `-jobname=${MAIN}`, `\\directlua{${LUA_INIT}}\\input{${MAIN}.tex}`];
  return ['lualatex', '--nosocket', ...common, `${MAIN}.tex`];
}

/**
 * xelatex's output driver in a warm sandbox: instead of starting xdvipdfmx (a third of a second
 * reading its font maps before the first byte of XDV), it hands the XDV to the xdvipdfmx the
 * sandbox started beside the engine and answers with that one's exit code (session.ts). XeTeX
 * appends ` -o "main.pdf"`, which the already running xdvipdfmx was given.
 */
export const XDV_DRIVER = `sh -c 'cat >"$QUIRE_OUT.xdv"; read code <"$QUIRE_OUT.status"; exit "$code"' --`;

/** The flag that sends an xelatex engine's XDV to the warm xdvipdfmx (`warmPdf`), or none. */
export function outputDriverArgs(compiler: Compiler, warmPdf: boolean): string[] {
  return compiler === 'xelatex' && warmPdf ? [`-output-driver=${XDV_DRIVER}`] : [];
}

/** The warm xdvipdfmx: XeTeX's own command for it, reading the XDV on its input. */
export const WARM_XDVIPDFMX = ['xdvipdfmx', '-q', '-E', '-o', `${MAIN}.pdf`];

/**
 * The same engine, flags and first action as engineArgs, started ahead of time (see session.ts):
 * in errorstop mode it loads its format, then waits on the terminal for one line, after which
 * it switches to nonstopmode and reads main.tex exactly as a cold run does. The line is read
 * into a macro that is then undefined again, so the document sees no trace of it.
 * `warmPdf`: xelatex hands its XDV to a warm xdvipdfmx (XDV_DRIVER). `coreMap`: pdflatex reads
 * that font map instead of pdftex.map (font-map.ts).
 */
export function warmEngineArgs(compiler: Compiler, fmt: string[] = [], warmPdf = false, coreMap?: string): string[] {
  const wait = String.raw`\read16 to\x \let\x\undefined\nonstopmode`;
  const common = [...fmt, ...outputDriverArgs(compiler, warmPdf), SHELL_ESCAPE, '-halt-on-error', '-file-line-error', '-recorder', `-jobname=${MAIN}`];
  if (compiler === 'pdflatex') return [compiler, ...common, `${coreMap ? loadCoreMap(coreMap) : LOAD_FONT_MAP}${wait}\\csname @@input\\endcsname ${MAIN}.tex `];
  if (compiler === 'xelatex') return [compiler, ...common, `${wait}\\csname @@input\\endcsname ${MAIN}.tex `];
  return ['lualatex', '--nosocket', ...common, `\\directlua{${LUA_INIT}}${LUA_AHEAD}${wait}\\input{${MAIN}.tex}`];
}

/**
 * pdflatex with a cached preamble format (see format-build.ts), started like a warm engine:
 * in errorstop mode it loads the format and waits for one terminal line, opening no file of
 * the job meanwhile; then it switches to nonstopmode, opens main.tex and skips its preamble.
 * Started ahead of time the driver gives the line; `fed` is the same pass started the
 * ordinary way, its line given at once. `coreMap`: the engine started ahead reads that font
 * map instead of pdftex.map (a format whose preamble loaded only core fonts; font-map.ts).
 */
export function formatEngineArgs(fed: boolean, coreMap?: string): string[] {
  const argv = ['pdflatex', `-fmt=${FORMAT}`, '-progname=pdflatex', SHELL_ESCAPE, '-halt-on-error', '-file-line-error', '-recorder', `-jobname=${MAIN}`];
  return fed ? ['sh', '-c', 'echo | exec "$@"', 'sh', ...argv, FORMAT_FIRST_LINE] : [...argv, (coreMap ? loadCoreMap(coreMap) : LOAD_FONT_MAP) + FORMAT_FIRST_LINE];
}
