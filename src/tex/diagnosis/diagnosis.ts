// The diagnosis a failed compile carries (SPEC §2.3): its classes and fields, declared once
// as the wire schema the compile bodies (HTTP and MCP) embed, and the type the rules build.
import { Type, type Static } from '@sinclair/typebox';

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

/**
 * How sure `suggested_package` is (extension of SPEC 1.5.0, docs/diagnosis.md): `certain`
 * without a test compile (the hand-written table, a misspelling, the index's one clear
 * candidate); `verified` by a probe compile that got TeX past the failing name; `unverified`
 * the index's best-ranked candidate when no probe could decide (none allowed, none finished).
 */
export const CONFIDENCES = ['certain', 'verified', 'unverified'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

export const DiagnosisBody = Type.Object(
  {
    error_class: Type.Union(ERROR_CLASSES.map((c) => Type.Literal(c))),
    summary: Type.String(),
    suggested_fix: Type.String({ description: 'The edit that fixes it, in one or two sentences' }),
    suggested_package: Type.Optional(Type.String({ description: 'Add \\usepackage{<this>} (or change the misspelt one to it)' })),
    confidence: Type.Optional(
      Type.Union(CONFIDENCES.map((c) => Type.Literal(c)), {
        description:
          'Present with suggested_package. certain: no test needed; verified: a probe compile with the package got past the error; unverified: the best-ranked installed package that defines the name, not tested (apply it and compile again).',
      }),
    ),
    symbol: Type.Optional(Type.String({ description: 'The failing command, environment, package, file or character' })),
    line: Type.Optional(Type.Integer({ description: 'Line of main.tex that needs the edit' })),
    retryable: Type.Boolean(),
  },
  { description: 'Diagnosis: present only when the cause is classified with certainty' },
);

export type Diagnosis = Static<typeof DiagnosisBody>;
