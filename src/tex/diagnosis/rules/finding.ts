// What a rule returns and what it reads, and the phrases every rule's sentences share.
import type { Compiler } from '../../compilers.js';
import type { Diagnosis } from '../diagnosis.js';
import type { ErrorBlock } from '../log.js';
import type { Source } from '../source.js';
import type { TexCatalog } from '../catalog.js';
import type { NameKind } from '../candidates.js';
import type { ShellRefusals } from './shell.js';
import type { Project } from '../project.js';

/** A rule's answer: a Diagnosis (retryable defaults to true) and the hint for the agent. */
export type Finding = Omit<Diagnosis, 'retryable'> & { retryable?: boolean; hint: string; verify?: Verification };

/**
 * A package suggestion taken from the TeX Live index that a probe compile should confirm: the
 * index had several candidates, or the definition sits inside an option or hook.
 */
export interface Verification {
  kind: NameKind;
  /** The name without backslash (command) or the environment name. */
  name: string;
  /** main.tex line where the name is used. */
  line?: number;
  /** Best first; the first is the one suggested until a probe says otherwise. */
  candidates: string[];
  /** False when the index had one sure candidate: no probe needed. */
  needed: boolean;
}

/**
 * The probes' answer for a name: the package that got TeX past it; null when none of the
 * candidates tried did; { failed } when the probes stopped before an answer (the budget was
 * spent), with the candidates that had failed by then.
 */
export type ProbeVerdict = string | null | { failed: string[] };
export type Verdicts = ReadonlyMap<string, ProbeVerdict>;
export const verdictKey = (kind: NameKind, name: string) => `${kind}:${name}`;

export interface RuleContext {
  block: ErrorBlock;
  blocks: ErrorBlock[];
  engine: Compiler;
  source?: Source;
  /** The TeX Live index, once loaded. */
  catalog?: TexCatalog;
  /** Probe results for index suggestions (see Verification). */
  verdicts?: Verdicts;
  /** A probe will check the suggestion (diagnose()): unsure suggestions may be offered. */
  probing?: boolean;
  /** main.tex line TeX reported, when it reported one. */
  line?: number;
  /** Shell escape refused before the error (rules/shell.ts). */
  shell?: ShellRefusals;
  /** The project's other files (classes and packages it brings, its \input files). */
  project?: Project;
}

export type Rule = (ctx: RuleContext) => Finding | undefined;

export const onLine = (line: number | undefined) => (line === undefined ? '' : ` on line ${line}`);
export const usepackage = (pkg: string, options?: string) => `\\usepackage${options ? `[${options}]` : ''}{${pkg}}`;
export const PREAMBLE = 'to the preamble (after \\documentclass, before \\begin{document})';

export function otherEngine(engines: readonly Compiler[]): string {
  const names = engines.map((e) => `"${e}"`).join(' or ');
  return `set "compiler" to ${names}`;
}

export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
