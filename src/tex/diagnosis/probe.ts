// Confirms a package suggestion by compiling a probe: the document's preamble with the
// candidate added, then the failing line (inside the environments open around it). A
// candidate passes when TeX gets past the failing name: the probe compiles, or its first
// error is a different one, on or after that line. Probes run through a port the caller
// supplies (the sandboxed job queue under the probe budget, compile/probe-budget.ts), one at
// a time; the port decides how much CPU time each may use and refuses when the budget is spent.
import type { Compiler } from '../compilers.js';
import { parseErrors, primaryError } from './log.js';
import type { ProbeVerdict, Verification } from './rules/finding.js';
import { Source } from './source.js';

/**
 * Runs one probe document; the caller decides where (the sandboxed TeX runner) and with what
 * CPU time. It throws when it will not run one (the caller's probe budget is spent, the queue
 * is full): the diagnosis then goes without a verdict.
 */
export type ProbeCompile = (source: string, compiler: Compiler) => Promise<{ outcome: string; log: string }>;

export interface ProbeOptions {
  probe: ProbeCompile;
  /** Candidates tried at most. */
  maxCandidates?: number;
}

/** Probe runs of one diagnosis at most: the top three candidates. */
export const MAX_CANDIDATES = 3;
/** Lines of an enclosing environment copied into the probe before the failing line. */
const MAX_CONTEXT_LINES = 40;

export interface ProbeDocument {
  source: string;
  /** Line of the probe where the failing line sits. */
  line: number;
}

/** The probe document for a candidate, or undefined when the source has no usable shape. */
export function probeDocument(text: string, pkg: string, line: number): ProbeDocument | undefined {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const source = new Source(text);
  const begin = source.beginDocument;
  const failing = lines[line - 1];
  if (begin === undefined || failing === undefined) return undefined;
  const use = `\\usepackage{${pkg}}`;
  if (line < begin) {
    // Used in the preamble: the package goes right above that line, as the fix says.
    const out = [...lines.slice(0, line - 1), use, failing, '\\begin{document}', '\\end{document}'];
    return { source: out.join('\n'), line: line + 1 };
  }
  const preamble = lines.slice(0, begin - 1);
  const open = source.openEnvironments(line).filter((e) => e.name !== 'document');
  const from = open[0] && line - open[0].line <= MAX_CONTEXT_LINES ? open[0].line : line;
  // The failing command's arguments may go on over the next lines: take them too.
  let last = line;
  for (let depth = braceDepth(source.line(line)); depth > 0 && last < line + MAX_CONTEXT_LINES && last < lines.length; ) {
    last++;
    depth += braceDepth(source.line(last));
  }
  const body = from === line ? [...open.map((e) => `\\begin{${e.name}}`), ...lines.slice(line - 1, last)] : lines.slice(from - 1, last);
  const closing = (from === line ? open : source.openEnvironments(last + 1).filter((e) => e.name !== 'document' && e.line >= from))
    .reverse()
    .map((e) => `\\end{${e.name}}`);
  const head = [...preamble, use, lines[begin - 1] ?? '\\begin{document}'];
  const out = [...head, ...body, ...closing, '\\end{document}'];
  return { source: out.join('\n'), line: head.length + body.length - (last - line) };
}

/** Braces opened minus braces closed on a line (comments already removed). */
function braceDepth(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '{') depth++;
    else if (text[i] === '}') depth--;
  }
  return depth;
}

/**
 * Whether the probe got past the failing name: `undecided` when the probe itself came out
 * malformed (TeX stopped at no line: an argument the extract cut off ran to the end of file).
 */
export function probePassed(result: { outcome: string; log: string }, kind: Verification['kind'], name: string, line: number): boolean | 'undecided' {
  if (result.outcome === 'ok') return true;
  // TeX ended without an error but its PDF could not be read: a probe body that typesets
  // nothing (\balance alone) leaves an empty PDF. TeX got past the name.
  if (result.outcome === 'unmeasurable') return primaryError(parseErrors(result.log)) === undefined;
  if (result.outcome !== 'failed') return false;
  const first = primaryError(parseErrors(result.log));
  // A probe body that typesets nothing (a preamble command, \printindex without its .ind)
  // fails only for want of a page: TeX got past the name.
  if (!first) return /^No pages of output\./m.test(result.log);
  // An error in a .tex file of the project (the probe stops at the \input of the file the
  // name is used in) is past the name unless it is the same one; one while loading a
  // package (a conflict the candidate brings) is not getting past.
  const inProject = first.file !== undefined && /^\.\/.*\.tex$/.test(first.file) && !/(^|\/)main\.tex$/.test(first.file);
  if (first.file !== undefined && !/(^|\/)main\.tex$/.test(first.file) && !inProject) return false;
  if (!inProject && first.line === undefined) return 'undecided';
  if (!inProject && (first.line ?? 0) < line) return false;
  if (kind === 'environment') return !new RegExp(`Environment ${escape(name)} undefined`).test(first.message);
  if (/^Undefined control sequence/.test(first.message)) {
    const read = first.context[0]?.read ?? '';
    return !new RegExp(`\\\\${escape(name)}\\s*$`).test(read);
  }
  return true;
}

/**
 * The first candidate whose probe passes; null when every one tried failed; { failed } when
 * the probes stopped before an answer (the port refused, a probe ran out of time) or one
 * could not tell, with the candidates that had failed.
 */
export async function verifyCandidates(text: string, engine: Compiler, v: Verification, options: ProbeOptions): Promise<ProbeVerdict> {
  const failed: string[] = [];
  let undecided = false;
  if (v.line === undefined) return { failed };
  for (const pkg of v.candidates.slice(0, options.maxCandidates ?? MAX_CANDIDATES)) {
    const doc = probeDocument(text, pkg, v.line);
    if (!doc) return { failed };
    let result;
    try {
      result = await options.probe(doc.source, engine);
    } catch {
      return { failed }; // no budget left, a full queue, a runner failure: no verdict
    }
    if (result.outcome === 'timeout') return { failed };
    const passed = probePassed(result, v.kind, v.name, doc.line);
    if (passed === true) return pkg;
    if (passed === 'undecided') undecided = true;
    else failed.push(pkg);
  }
  return undecided ? { failed } : null;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
