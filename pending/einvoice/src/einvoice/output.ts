// The hook of output.einvoice into a compile (issue 41 item 1), run by the compile service
// before the output is parsed and before the quota is reserved: build the CII XML, validate it
// with the official rules, refuse an invoice with errors (422 einvoice_invalid, nothing charged,
// no TeX), and otherwise hand back the request's `output` with the XML as a PDF/A-3 attachment
// (factur-x.xml or xrechnung.xml, /AFRelationship per profile) and pdf_standard a-3b, so the
// existing output step embeds it and writes the Factur-X XMP (tex/output/facturx.ts).
import { errors, validationFailed, type FieldError } from '../errors.js';
import { buildCii, PROFILES } from './build.js';
import type { EinvoiceRequest } from './model.js';
import type { EinvoiceReport, EinvoiceProfile } from './report.js';
import { validateInvoiceXml } from './validate.js';

export type Validate = (xml: Buffer, profile: EinvoiceProfile) => Promise<EinvoiceReport>;

/** What a response carries about the e-invoice (`einvoice` on the compile answer). */
export type EinvoiceSummary = Pick<EinvoiceReport, 'profile' | 'valid' | 'rules_version' | 'errors' | 'warnings'>;

export interface PreparedEinvoice {
  /** The request's output with the XML attached and PDF/A-3b, `einvoice` taken out. */
  output: Record<string, unknown>;
  report: EinvoiceSummary;
  xml: Buffer;
}

const defaultValidate: Validate = (xml, profile) => validateInvoiceXml(xml, { profile });

/** The names an e-invoice XML takes: a caller's attachment of that name would be a second one. */
const XML_NAMES = ['factur-x.xml', 'xrechnung.xml', 'zugferd-invoice.xml'];

/**
 * `raw`: the request's `output`, already checked against its schema (checkOutputShape).
 * Null when it asks for no e-invoice. Throws validation_failed for a conflicting output and
 * einvoice_invalid for an invoice the rules refuse.
 */
export async function prepareEinvoice(raw: unknown, validate: Validate = defaultValidate): Promise<PreparedEinvoice | null> {
  if (typeof raw !== 'object' || raw === null || !('einvoice' in raw) || raw.einvoice === undefined) return null;
  const { einvoice, ...rest } = raw as { einvoice: EinvoiceRequest } & Record<string, unknown>;
  const fields: FieldError[] = [];
  const standard = rest.pdf_standard as string | undefined;
  if (standard !== undefined && standard !== 'a-3b' && standard !== 'a-3u') {
    fields.push({ field: 'output.pdf_standard', rule: 'conflict', message: 'an e-invoice is a PDF/A-3 (a-3b, the default, or a-3u)' });
  }
  if (rest.encrypt !== undefined) fields.push({ field: 'output.encrypt', rule: 'conflict', message: 'an e-invoice is a PDF/A-3, which forbids encryption' });
  const attached = Object.keys((rest.attachments as Record<string, unknown> | undefined) ?? {}).filter((name) => XML_NAMES.includes(name.toLowerCase()));
  if (attached.length > 0) fields.push({ field: `output.attachments.${attached[0]}`, rule: 'conflict', message: 'output.einvoice embeds the invoice XML itself: send one or the other' });
  if (einvoice.invoice === undefined) {
    fields.push(
      'from_data' in einvoice
        ? { field: 'output.einvoice.from_data', rule: 'render', message: "derives the invoice from a render's data: send invoice on a compile" }
        : { field: 'output.einvoice.invoice', rule: 'required', message: 'is required (or from_data on a render)' },
    );
  } else if ('from_data' in einvoice) {
    fields.push({ field: 'output.einvoice.from_data', rule: 'one_of', message: 'send invoice or from_data, not both' });
  }
  if (fields.length > 0 || einvoice.invoice === undefined) throw validationFailed(fields);
  const invoice = einvoice.invoice;

  const profile = PROFILES[einvoice.profile];
  const xml = await buildCii(invoice, einvoice.profile);
  const full = await validate(xml, einvoice.profile);
  const report: EinvoiceSummary = { profile: full.profile, valid: full.valid, rules_version: full.rules_version, errors: full.errors, warnings: full.warnings };
  if (!full.valid) {
    const rules = [...new Set(full.errors.map((e) => e.rule))];
    throw errors.einvoice_invalid(`The ${einvoice.profile} e-invoice breaks ${rules.length === 1 ? 'rule' : 'rules'} ${rules.slice(0, 10).join(', ')}: ${full.errors[0]?.message ?? ''}`.trim(), {
      profile: einvoice.profile,
      rules,
      einvoice: report,
      agent_hint: 'Fix the invoice fields each rule names (e.g. BR-CO-10: the line nets must add up to the line total; leave totals out to have them computed), then send it again.',
    });
  }
  const attachments = {
    ...((rest.attachments as Record<string, unknown> | undefined) ?? {}),
    [profile.fileName]: {
      content_base64: xml.toString('base64'),
      relationship: profile.relationship,
      mime_type: 'text/xml',
      description: `${profile.level === 'XRECHNUNG' ? 'XRechnung' : 'Factur-X'} invoice ${invoice.number}`,
    },
  };
  return { output: { ...rest, pdf_standard: standard ?? 'a-3b', attachments }, report, xml };
}
