// The `einvoice` object of a compile or render answer (issue 41): the validation report of the
// e-invoice XML the service built and embedded, as TypeBox for the routes' response schemas.
import { Type } from '@sinclair/typebox';

const Finding = Type.Object({ rule: Type.String(), message: Type.String(), location: Type.String() });

export const EinvoiceSummaryBody = Type.Object(
  {
    profile: Type.Union([Type.String(), Type.Null()]),
    valid: Type.Boolean(),
    rules_version: Type.String({ description: 'The rule sets that ran, with their versions' }),
    errors: Type.Array(Finding),
    warnings: Type.Array(Finding, { description: 'Rules with flag warning: they do not stop the PDF' }),
  },
  { description: 'Extension (issue 41): with output.einvoice, the validation report of the embedded XML (docs/einvoice.md)' },
);
