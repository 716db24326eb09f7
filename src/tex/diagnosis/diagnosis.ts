// The diagnosis a failed compile carries (SPEC §2.3): its classes and fields, declared once.
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
