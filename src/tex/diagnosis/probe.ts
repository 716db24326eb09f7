// Confirms a package suggestion by compiling a probe: the document's preamble with the
// candidate added, then the failing line (inside the environments open around it). A
// candidate passes when TeX gets past the failing name: the probe compiles, or its first
// error is a different one, on or after that line. Probes run through a port the caller
// supplies (the sandboxed job queue), one at a time, within a small total time budget.
import type { Compiler } from '../compilers.js';
import { parseErrors, primaryError } from './log.js';
import type { Verification } from './rules/finding.js';
import { Source } from './source.js';

/** Runs one probe document; the caller decides where (the sandboxed TeX runner). */
export type ProbeCompile = (source: string, compiler: Compiler, timeoutMs: number) => Promise<{ outcome: string; log: string }>;

export interface ProbeOptions {
  probe: ProbeCompile;
  /** Total time for all probes of one diagnosis. */
  budgetMs?: number;
  /** Candidates tried at most. */
  maxCandidates?: number;
}

export const PROBE_BUDGET_MS = 5000;
const MAX_CANDIDATES = 3;
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

/** The probe got past the failing name. */
export function probePassed(result: { outcome: string; log: string }, kind: Verification['kind'], name: string, line: number): boolean {
  if (result.outcome === 'ok') return true;
  if (result.outcome !== 'failed') return false;
  const first = primaryError(parseErrors(result.log));
  if (!first) return false;
  // An error while loading a package (a conflict the candidate brings) is not getting past.
  if (first.file !== undefined && !/(^|\/)main\.tex$/.test(first.file)) return false;
  if (first.line === undefined || first.line < line) return false;
  if (kind === 'environment') return !new RegExp(`Environment ${escape(name)} undefined`).test(first.message);
  if (/^Undefined control sequence/.test(first.message)) {
    const read = first.context[0]?.read ?? '';
    return !new RegExp(`\\\\${escape(name)}\\s*$`).test(read);
  }
  return true;
}

/**
 * The first of the candidates whose probe passes; null when every tried candidate failed;
 * undefined when the budget ran out before any answer.
 */
export async function verifyCandidates(text: string, engine: Compiler, v: Verification, options: ProbeOptions): Promise<string | null | undefined> {
  if (v.line === undefined) return undefined;
  const deadline = performance.now() + (options.budgetMs ?? PROBE_BUDGET_MS);
  let tried = 0;
  for (const pkg of v.candidates.slice(0, options.maxCandidates ?? MAX_CANDIDATES)) {
    const doc = probeDocument(text, pkg, v.line);
    if (!doc) return undefined;
    const remaining = deadline - performance.now();
    if (remaining < 200) return tried > 0 && tried === v.candidates.length ? null : undefined;
    let result;
    try {
      result = await options.probe(doc.source, engine, remaining);
    } catch {
      return undefined; // the queue is full or the runner failed: no verdict
    }
    if (result.outcome === 'timeout') return undefined;
    tried++;
    if (probePassed(result, v.kind, v.name, doc.line)) return pkg;
  }
  return null;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
