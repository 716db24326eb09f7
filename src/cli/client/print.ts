// What `quire compile` says, the way a compiler says it: a failure as `file:line: summary`,
// the source line with a caret under the offending token, the fix and the line to paste; the
// warnings; one summary line on success. Pure text from the service's answer and the local
// files, so scripts can rely on the shape (test/cli/print.test.ts).
import { relative } from 'node:path';

export interface Diagnosis {
  error_class?: string;
  summary?: string;
  suggested_fix?: string;
  suggested_package?: string;
  line?: number;
}

export interface Refusal {
  error: string;
  message: string;
  log?: string;
  line?: number;
  diagnosis?: Diagnosis;
  [field: string]: unknown;
}

export interface Warning {
  type: string;
  message: string;
  line?: number;
  fix: string;
}

/** Where TeX stopped: the file as the log names it, the line, TeX's message and the text read so far on that line. */
export interface Stop {
  file: string;
  line: number;
  message: string;
  before?: string;
}

/** The first `file:line: message` of a log written with -file-line-error, and TeX's `l.N …` context after it. */
export function firstStop(log: string): Stop | null {
  const lines = log.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\S(?:.*?\S)?\.(?:tex|sty|cls|bib|ltx|def|cfg|clo)):(\d+): (.+)$/.exec(lines[i]!);
    if (!m) continue;
    const stop: Stop = { file: m[1]!.replace(/^\.\//, ''), line: Number(m[2]), message: m[3]! };
    for (let j = i + 1; j < Math.min(lines.length, i + 40); j++) {
      const context = /^l\.(\d+) (.*)$/.exec(lines[j]!);
      if (context && Number(context[1]) === stop.line) {
        stop.before = context[2]!;
        break;
      }
    }
    return stop;
  }
  return null;
}

/** Line `line` of the source, numbered, and a caret line under the token TeX stopped at (the last one it read). */
export function caret(line: number, source: string, before: string | undefined): string[] {
  const out = [`${String(line).padStart(5)} | ${source}`];
  if (before === undefined) return out;
  let read = before.startsWith('...') ? before.slice(3) : before;
  const at = source.indexOf(read);
  // TeX reads the space after a control word with it; the caret goes under the word.
  read = read.trimEnd();
  if (at < 0 || read.length === 0) return out;
  // The last token TeX read; a command with its braced arguments (\end{itemize}) as a whole.
  const token = /(\\[A-Za-z@]+\*?(?:\{[^{}]*\})*|\\.|.)$/.exec(read)![0];
  return [...out, `${' '.repeat(5)} | ${' '.repeat(at + read.length - token.length)}^${'~'.repeat(token.length - 1)}`];
}

export interface FailureContext {
  /** Project file names as the server saw them → paths to print (relative to where the command runs). */
  localPath(serverName: string): string | null;
  /** The text of line `line` of a project file, when it is there. */
  sourceLine(serverName: string, line: number): string | null;
}

/** The diagnosis of a failed compile, compiler style. */
export function formatFailure(body: Refusal, context: FailureContext): string {
  const d = body.diagnosis;
  const stop = body.log ? firstStop(body.log) : null;
  const file = stop?.file ?? 'main.tex';
  const line = stop?.line ?? d?.line ?? body.line;
  const shown = context.localPath(file) ?? file;
  const summary = d?.summary ?? stop?.message ?? body.message;
  const out = [`${shown}${line ? `:${line}` : ''}: error: ${summary}`];
  const source = line ? context.sourceLine(file, line) : null;
  if (source !== null && line) out.push(...caret(line, source, stop?.line === line ? stop.before : undefined));
  if (d?.suggested_fix) out.push(`  fix: ${d.suggested_fix}`);
  if (d?.suggested_package) out.push(`  add: \\usepackage{${d.suggested_package}}`);
  if (!d) out.push("  (no diagnosis for this one: TeX's own words are in the log, printed with --log)");
  return out.join('\n');
}

/** Warnings of a delivered PDF, one per line, compiler style. */
export function formatWarnings(warnings: Warning[], mainPath: string): string[] {
  return warnings.map((w) => `${mainPath}${w.line ? `:${w.line}` : ''}: warning: ${w.message}\n  fix: ${w.fix}`);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

export interface Success {
  pages: number;
  compilation_time_ms: number;
  anonymous?: boolean;
  remaining_today?: number;
  usage?: { plan?: unknown; monthly_limit?: unknown; used_this_month?: unknown };
}

/** "wrote thesis/main.pdf: 3 pages, 0.41 s on the server, 0.62 s end to end (pro: 12/2000 this month)". */
export function formatSuccess(pdfPath: string, body: Success, endToEndMs: number): string {
  const pages = `${body.pages} page${body.pages === 1 ? '' : 's'}`;
  const { usage } = body;
  const plan = body.anonymous
    ? `keyless: ${body.remaining_today ?? '?'} left today`
    : usage && usage.monthly_limit !== undefined
      ? `${String(usage.plan)}: ${String(usage.used_this_month)}/${String(usage.monthly_limit)} this month`
      : null;
  return `wrote ${pdfPath}: ${pages}, ${seconds(body.compilation_time_ms)} on the server, ${seconds(endToEndMs)} end to end${plan ? ` (${plan})` : ''}`;
}

/** A path as the user would type it from the current folder. */
export function shownPath(absolute: string): string {
  const rel = relative(process.cwd(), absolute);
  return rel === '' || rel.startsWith('..') ? absolute : rel;
}
