// Validates one CII or UBL invoice with the official rules (issue 41 item 2): the XML is read
// safely first (scan.ts: no DTD, no entities, bounded size and depth), then checked against the
// XML schema and the EN 16931 schematron (plus KoSIT's XRechnung rules for that profile), all in
// the rules worker (pool.ts) so the event loop stays free. Bad input is a ServiceError
// (einvoice_xml_refused, einvoice_pdf_refused); a broken invoice is a report, not an error.
import { fail, invalidField, type ServiceError } from '../errors.js';
import type { CheckOutcome } from './check.js';
import { rulesPool } from './pool.js';
import type { EinvoiceReport, ValidateInvoiceOptions } from './report.js';
import { XML_MAX_BYTES } from './scan.js';
import { PDF_MAX_BYTES } from './pdf-xml.js';

export type { EinvoiceFinding, EinvoiceProfile, EinvoiceReport, ValidateInvoiceOptions } from './report.js';
export { EINVOICE_PROFILES } from './report.js';
export { XML_MAX_BYTES } from './scan.js';
export { PDF_MAX_BYTES } from './pdf-xml.js';

/** Throws einvoice_xml_refused for hostile or unreadable XML; otherwise answers the report. */
export async function validateInvoiceXml(xml: string | Uint8Array, opts: ValidateInvoiceOptions = {}): Promise<EinvoiceReport> {
  // Checked here too, so an oversize upload is refused without being copied to the worker.
  const bytes = typeof xml === 'string' ? Buffer.byteLength(xml, 'utf8') : xml.byteLength;
  if (bytes > XML_MAX_BYTES) throw fail('einvoice_xml_refused', `The XML is ${bytes} bytes; at most ${XML_MAX_BYTES} are taken.`, { reason: 'too_large', limit: XML_MAX_BYTES });
  return settle(await rulesPool().check({ xml }, opts.profile));
}

/** The same for the invoice XML embedded in a Factur-X / ZUGFeRD / XRechnung PDF. */
export async function validateInvoicePdf(pdf: Uint8Array, opts: ValidateInvoiceOptions = {}): Promise<EinvoiceReport> {
  if (pdf.byteLength > PDF_MAX_BYTES) throw fail('einvoice_pdf_refused', `The PDF is ${pdf.byteLength} bytes; at most ${PDF_MAX_BYTES} are taken.`, { reason: 'too_large', limit: PDF_MAX_BYTES });
  return settle(await rulesPool().check({ pdf }, opts.profile));
}

/** Starts the rules worker and loads the rule sets, so the first validation is warm. */
export function warmInvoiceRules(): void {
  rulesPool().warm();
}

function settle(outcome: CheckOutcome): EinvoiceReport {
  if (outcome.ok) return outcome.report;
  throw refusal(outcome);
}

function refusal(outcome: Extract<CheckOutcome, { ok: false }>): ServiceError {
  if (outcome.code === 'validation_failed') {
    const field = (outcome.details.fields as { field: string; rule: string; message: string }[])[0]!;
    return invalidField(field.field, field.rule, field.message);
  }
  return fail(outcome.code, outcome.message, outcome.details as { reason: string });
}
