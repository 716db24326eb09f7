// What the preamble cache keys on and what it refuses to cache. A source's preamble is
// everything before its first line that begins with \begin{document}; a dumped format of it
// is reusable only for the same engine, the same preamble bytes, the same files read by it,
// the same TeX Live, the same UTC day and the same scope (account, or the public gallery).
// Preambles whose effect a dumped format might not reproduce are refused before any build.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { fingerprint, texmfRoots } from '../diagnosis/texlive.js';
import { hostPath, imageTool } from '../image/tools.js';
import type { PreambleScope } from '../job.js';

export interface PreambleSplit {
  /** Bytes before the \begin{document} line. */
  preamble: string;
  /** Lines in the preamble (the body starts on the next). */
  lines: number;
}

/** The preamble of `source`, or null when no line begins with \begin{document} (not cacheable). */
export function splitPreamble(source: string): PreambleSplit | null {
  const match = /^[ \t]*\\begin\{document\}/m.exec(source);
  if (!match) return null;
  const preamble = source.slice(0, match.index);
  return { preamble, lines: preamble.split('\n').length - 1 };
}

/**
 * Constructs a format cannot be trusted to reproduce, or that would confuse the dump:
 * another \begin{document} or the dump's own markers, catcode or job hooks, anything that
 * captures the time of day or a random number, writes files, or picks the format (`%&`).
 */
const REFUSED: Array<[RegExp, string]> = [
  [/^%&/, 'a %& format line'],
  [/\\begin\s*\{document\}|\\document\b|\\enddocument\b/, 'a second \\begin{document}'],
  [/endofdump|\\dump\b|\\endinput\b|\\everyjob\b/, 'format dump controls'],
  [/\\catcode\b|\\uccode\b|\\lccode\b|\\endlinechar\b|\\newlinechar\b/, 'catcode changes'],
  [/\\time\b|\\pdfelapsedtime\b|\\pdfcreationdate\b|\\pdf(?:uniform|normal)deviate\b|\\pdf(?:set)?randomseed\b|\\currenttime\b/, 'the time of day or random numbers'],
  [/\\(?:immediate|openout|write|filecontents|newwrite)\b|\{filecontents\*?\}/, 'file writes'],
  [/\\jobname\b/, 'reads of its own job files'],
  // A cached preamble's pass reads pdftex.map before the document (LOAD_FONT_MAP in job.ts).
  [/\\pdfmap(?:file|line)\b/, 'font map changes'],
  // A format is dumped from one document and used for the next: a preamble that reads a file
  // (main.tex's body above all) would freeze the first document's bytes into the format.
  [/\\(?:openin|read|readline|closein|ifeof)(?![A-Za-z@])|\\pdf(?:filedump|mdfivesum|filesize|filemoddate)\b|\\CatchFile|\\(?:ior|file)_|\\(?:verbatiminput|VerbatimInput|lstinputlisting|inputminted)\b/, 'file reads'],
];

/**
 * The commands that read (or probe) a file named by their argument: refused when it is
 * main.tex or a file of the job (the job's `files` and assets), or when the name is computed.
 * A name spelled through \csname escapes this check; the build's recorder does not (format-build.ts).
 */
const FILE_ARGUMENT =
  /\\(input|include|@input|@@input|@iinput|InputIfFileExists|IfFileExists|subfile|import|subimport|usepackage|RequirePackage|RequirePackageWithOptions|documentclass|LoadClass|LoadClassWithOptions)(?![A-Za-z@])\s*(?:\[[^\]]*\]\s*)?(?:\{([^{}]*)\}|([^\s{}%\\]*))(?:\s*\{([^{}]*)\})?/g;

function readsJobFile(preamble: string, jobFiles: ReadonlyArray<string>): boolean {
  const names = new Set(['main', 'main.tex', ...jobFiles]);
  const named = (arg: string) => {
    const name = arg.trim().replace(/^(?:\.\/)+/, '');
    return ['', '.tex', '.sty', '.cls'].some((ext) => names.has(name + ext));
  };
  for (const match of preamble.replace(/(^|[^\\])%.*$/gm, '$1').matchAll(FILE_ARGUMENT)) {
    const [, command, braced, bare, second] = match;
    const arg = braced ?? bare ?? '';
    // `\input\foo` or `\input{\foo}`: the name is made by a macro.
    if (arg.trim() === '' || /[\\#]/.test(arg)) return true;
    if (arg.split(',').some(named)) return true;
    if ((command === 'import' || command === 'subimport') && second !== undefined && (/[\\#]/.test(second) || named(`${arg.trim().replace(/\/?$/, '/')}${second}`) || named(second))) return true;
  }
  return false;
}

/**
 * Why a preamble is not cached, or null when it may be built. `jobFiles`: the names of the
 * job's files (its `files` and assets), which the preamble must not read.
 */
export function refusal(preamble: string, jobFiles: ReadonlyArray<string> = []): string | null {
  for (const [pattern, why] of REFUSED) if (pattern.test(preamble)) return why;
  if (readsJobFile(preamble, jobFiles)) return 'reads of its own job files';
  // Braces must balance outside comments and escapes: the dump stops at \begin{document}.
  let depth = 0;
  for (const line of preamble.split('\n')) {
    const text = line.replace(/\\[\\{}%]/g, '').replace(/%.*$/, '');
    for (const ch of text) {
      if (ch === '{') depth++;
      else if (ch === '}' && --depth < 0) return 'unbalanced braces';
    }
  }
  return depth === 0 ? null : 'unbalanced braces';
}

export interface PreambleKeyParts extends PreambleScope {
  engine: string;
  preamble: string;
  /** The TeX Live installation (engine version, base format, file databases). */
  texlive: string;
}

/** One SHA-256 over every part, each length-prefixed. */
export function preambleKey(parts: PreambleKeyParts): string {
  const hash = createHash('sha256');
  for (const value of [parts.scope, parts.engine, parts.texlive, parts.day, parts.preamble]) {
    const bytes = Buffer.from(value, 'utf8');
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

/**
 * The installed TeX Live as the cache sees it: pdftex's version line, the base format and
 * mylatexformat (path, size, time) and the file databases (ls-R, rewritten by every package
 * install). Any change gives new keys, so formats of the old installation are never used.
 */
export async function texliveIdentity(image: string | undefined): Promise<{ id: string; baseBytes: number }> {
  const stdout = await imageTool(['pdftex', '--version'], image);
  const parts = [image ?? 'host', stdout.split('\n')[0]?.trim() ?? '', fingerprint(texmfRoots(image), 0)];
  let baseBytes = 0;
  for (const [engine, name] of [['pdftex', 'pdflatex.fmt'], ['pdftex', 'mylatexformat.ltx']] as const) {
    const found = (await imageTool(['kpsewhich', `-engine=${engine}`, name], image)).trim();
    if (!found) throw new Error(`${name} not found`);
    const path = hostPath(found, image);
    const s = await stat(path);
    parts.push(`${path}:${s.size}:${s.mtimeMs}`);
    if (name === 'pdflatex.fmt') baseBytes = s.size;
  }
  return { id: parts.join('\n'), baseBytes };
}
