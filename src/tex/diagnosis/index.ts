// Reads a TeX log and says what broke, where, and the edit that fixes it (SPEC §2.3).
// A diagnosis is only given when a rule recognises the error with certainty; anything else
// still gets its line and message, and the caller reads the log.
import type { Compiler } from '../compilers.js';
import { parseErrors, primaryError, unwrap, type ErrorBlock } from './log.js';
import type { Diagnosis } from './diagnosis.js';
import { RULES, RULES_ANYWHERE, RULES_IN_BIBLIOGRAPHY, shellRefusals, unexplainedRefusal, verdictKey, type Finding, type Verdicts, type Verification } from './rules/index.js';
import { catalog as loadedCatalog, type TexCatalog } from './catalog.js';
import { verifyCandidates, type ProbeOptions } from './probe.js';
import { Source } from './source.js';
import { Project, type ProjectFile } from './project.js';
import { missingGlyphs } from './glyphs.js';
import { missingDatabase } from './bibtools.js';

export { CONFIDENCES, DiagnosisBody, ERROR_CLASSES, type Confidence, type Diagnosis, type ErrorClass } from './diagnosis.js';

export interface LogAnalysis {
  /** Source line of the first real error, when the log names one. */
  line?: number;
  /** The first error message as TeX printed it. */
  message?: string;
  /** Present only when the cause is classified with confidence. */
  diagnosis?: Diagnosis;
  /** One imperative sentence telling an automated caller what to do next. */
  agent_hint: string;
  /** A package suggestion from the TeX Live index that a probe compile should confirm. */
  verify?: Verification;
}

export interface AnalyzeOptions {
  /** The submitted main.tex. With it, lines TeX reports late (a \usepackage, an unclosed
   * argument) are pinned to the line that needs the edit. */
  source?: string;
  /** The TeX Live index; by default the shared one, once it is loaded (null: the table only). */
  catalog?: TexCatalog | null;
  /** Probe results from diagnose(). */
  verdicts?: Verdicts;
  /** Set by diagnose(): suggestions that need a probe may be returned (with `verify`). */
  probing?: boolean;
  /** The project's other files as sent with main.tex: an error in one of them is diagnosed there. */
  files?: readonly ProjectFile[];
}

export function analyzeLog(log: string, engine: Compiler, options: AnalyzeOptions = {}): LogAnalysis {
  const database = missingDatabase(log, options.source === undefined ? undefined : new Source(options.source));
  if (database) {
    const diagnosis = toDiagnosis(database, database.line);
    return { ...(diagnosis.line !== undefined ? { line: diagnosis.line } : {}), message: database.summary, diagnosis, agent_hint: database.hint };
  }
  const blocks = parseErrors(log);
  const primary = primaryError(blocks);
  const lines = unwrap(log);
  if (!primary) {
    const source = options.source === undefined ? undefined : new Source(options.source);
    const refused = unexplainedRefusal(shellRefusals(lines), (pattern) => source?.find(pattern));
    if (refused) return { ...(refused.line !== undefined ? { line: refused.line } : {}), message: refused.summary, diagnosis: toDiagnosis(refused, refused.line), agent_hint: refused.hint };
    return { agent_hint: 'Read the log for the first line that reports a problem, fix the source there and compile again.' };
  }
  const message = primary.message;
  const project = options.files && options.files.length > 0 ? new Project(options.files) : undefined;
  const document = project && options.source !== undefined ? project.expand(options.source) : undefined;
  const origin = project && document !== undefined ? { document, project: project.definitions(document) } : {};
  const main = options.source === undefined ? undefined : new Source(options.source, origin);
  // An error in a .tex file of the project (an \input chapter or macro file) is the caller's
  // code like main.tex: read that file, at the line the log names.
  const own = primary.file !== undefined && !isMain(primary.file) && /\.tex$/i.test(primary.file) && main && project ? project.text(primary.file) : undefined;
  const file = own !== undefined ? (primary.file ?? '').replace(/^(\.\/)+/, '') : undefined;
  const source =
    own !== undefined && main
      ? new Source(own, { ...origin, file, ...optional('includedAt', project?.includedAt(main.text, file ?? '')), ...optional('mainBegin', main.beginDocument) })
      : main;
  const line = own !== undefined ? primary.line : mainLine(primary, blocks);
  // An error inside a package or class file is about code the caller did not write: only
  // rules that do not depend on where TeX was can explain it.
  const rules = primary.file === undefined || isMain(primary.file) || own !== undefined ? RULES : isBibliography(primary.file) ? RULES_IN_BIBLIOGRAPHY : RULES_ANYWHERE;
  const catalog = options.catalog === null ? undefined : (options.catalog ?? loadedCatalog());
  const shell = shellRefusals(lines.slice(0, primary.at));
  for (const rule of rules) {
    const found = rule({ block: primary, blocks, engine, source, line, catalog, verdicts: options.verdicts, probing: options.probing, shell, project });
    if (found) {
      // `line` is main.tex's: for a project file, its name and line are in the sentences instead.
      const finding = file !== undefined ? inFile(found, file) : found;
      const diagnosis = toDiagnosis(finding, file !== undefined ? undefined : line);
      return { ...(diagnosis.line !== undefined ? { line: diagnosis.line } : {}), message, diagnosis, agent_hint: finding.hint, ...(finding.verify ? { verify: finding.verify } : {}) };
    }
  }
  const elsewhere = primary.file !== undefined && !isMain(primary.file) ? ` in ${primary.file.replace(/^\.\//, '')}${primary.line === undefined ? '' : ` line ${primary.line}`} (a file main.tex loads)` : '';
  const where = line === undefined ? elsewhere : ` at line ${line} of main.tex`;
  return {
    line,
    message,
    agent_hint: `Fix the error "${clip(message)}"${where} (see the log for TeX's context) and compile again.`,
  };
}

/**
 * analyzeLog, plus probe compiles when the package it would suggest comes from the TeX Live
 * index without a clear winner (several candidates, an unsure definition): suggested_package
 * is then the candidate that got TeX past the failing name (`confidence: "verified"`), absent
 * when none did, and the best-ranked candidate no probe ruled out (`"unverified"`) when the
 * probes stopped before an answer (the probe port refused: its budget was spent).
 */
export async function diagnose(log: string, engine: Compiler, options: AnalyzeOptions & Partial<ProbeOptions> = {}): Promise<LogAnalysis> {
  const canProbe = options.probe !== undefined && options.source !== undefined;
  const first = analyzeLog(log, engine, { ...options, probing: canProbe });
  const v = first.verify;
  if (!v) return first;
  const { verify: _, ...plain } = first;
  if (!v.needed) return plain;
  const verdict = options.probe && options.source !== undefined ? await verifyCandidates(options.source, engine, v, { ...options, probe: options.probe }) : { failed: [] };
  const verdicts = new Map(options.verdicts ?? []);
  verdicts.set(verdictKey(v.kind, v.name), verdict);
  // Without an answer, a loaded package that should define the name stays unexplained (probing: false).
  const decided = typeof verdict === 'string' || verdict === null;
  const { verify: __, ...again } = analyzeLog(log, engine, { ...options, verdicts, probing: decided });
  return again;
}

/**
 * Characters xelatex/lualatex skipped because the font lacks them. Those engines still write
 * a PDF, so this is separate from analyzeLog: the compile service delivers it with a missing_glyph warning.
 */
export function missingCharacters(log: string, engine: Compiler, options: AnalyzeOptions = {}): Diagnosis | undefined {
  const finding = missingGlyphs(log, engine, options.source === undefined ? undefined : new Source(options.source));
  return finding ? toDiagnosis(finding, finding.line) : undefined;
}

/**
 * The same as missingCharacters, shaped like analyzeLog's result (message, line, agent_hint)
 * for a compile service that turns lost glyphs into a compilation_failed answer.
 */
export function analyzeMissingCharacters(log: string, engine: Compiler, options: AnalyzeOptions = {}): LogAnalysis | undefined {
  const finding = missingGlyphs(log, engine, options.source === undefined ? undefined : new Source(options.source));
  if (!finding) return undefined;
  const diagnosis = toDiagnosis(finding, finding.line);
  return { line: diagnosis.line, message: finding.summary, diagnosis, agent_hint: finding.hint };
}

/** The main.tex line an error block points at: its own, or the stop that follows it. */
function mainLine(block: ErrorBlock, blocks: ErrorBlock[]): number | undefined {
  if (block.file !== undefined) return isMain(block.file) ? block.line : undefined;
  if (block.line !== undefined) return block.line;
  const next = blocks[blocks.indexOf(block) + 1];
  return next?.file !== undefined && isMain(next.file) ? next.line : next?.line;
}

function isMain(file: string): boolean {
  return /(^|\/)main\.tex$/.test(file);
}

/** A bibliography bibtex or biber wrote in the job folder (main.bbl; bibunits' bu1.bbl, multibib's). */
function isBibliography(file: string): boolean {
  return /^(\.\/)?[^/]+\.bbl$/.test(file);
}

function toDiagnosis(finding: Finding, fallbackLine: number | undefined): Diagnosis {
  const diagnosis: Diagnosis = {
    error_class: finding.error_class,
    summary: finding.summary,
    suggested_fix: finding.suggested_fix,
    retryable: finding.retryable ?? true,
  };
  if (finding.suggested_package !== undefined) {
    diagnosis.suggested_package = finding.suggested_package;
    diagnosis.confidence = finding.confidence ?? 'certain';
  }
  if (finding.symbol !== undefined) diagnosis.symbol = finding.symbol;
  const line = finding.line ?? fallbackLine;
  if (line !== undefined) diagnosis.line = line;
  return diagnosis;
}

/** A finding about a project file: "on line N" names the file, and `line` (main.tex's) goes. */
function inFile(finding: Finding, file: string): Finding {
  const name = (text: string) => text.replace(/\bon line (\d+)(?! of )/g, `on line $1 of ${file}`);
  const { line: _, ...rest } = finding;
  return { ...rest, summary: name(finding.summary), suggested_fix: name(finding.suggested_fix), hint: name(finding.hint) };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
