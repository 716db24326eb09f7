// Reads a TeX log and says what broke. This first version finds the first error and its
// line; the diagnosis work replaces it with a full classifier (SPEC §2.3).
import type { Compiler } from '../../quota/plans.js';

export const ERROR_CLASSES = [
  'missing_package',
  'missing_document_class',
  'missing_asset',
  'undefined_command',
  'undefined_environment',
  'mismatched_environment',
  'missing_math_mode',
  'missing_begin_document',
  'unsupported_unicode',
  'unbalanced_braces',
  'runaway_argument',
  'fatal_error',
] as const;

export type ErrorClass = (typeof ERROR_CLASSES)[number];

export interface Diagnosis {
  error_class: ErrorClass;
  summary: string;
  suggested_fix: string;
  suggested_package?: string;
  symbol?: string;
  line?: number;
  retryable: boolean;
}

export interface LogAnalysis {
  /** Source line of the first real error, when the log names one. */
  line?: number;
  /** The first error message as TeX printed it. */
  message?: string;
  /** Present only when the cause is classified with confidence. */
  diagnosis?: Diagnosis;
  /** One imperative sentence telling an automated caller what to do next. */
  agent_hint: string;
}

export function analyzeLog(log: string, _engine: Compiler): LogAnalysis {
  const fileLine = /^(?:\.\/)?[^\s:]+\.tex:(\d+): (.+)$/m.exec(log);
  if (fileLine) {
    return {
      line: Number(fileLine[1]),
      message: fileLine[2],
      agent_hint: `Fix the error at line ${fileLine[1]} ("${fileLine[2]}") and compile again.`,
    };
  }
  const bang = /^! (.+)$/m.exec(log);
  const at = /^l\.(\d+)/m.exec(log);
  return {
    line: at ? Number(at[1]) : undefined,
    message: bang?.[1],
    agent_hint: 'Read the log for the first error, fix the source and compile again.',
  };
}
