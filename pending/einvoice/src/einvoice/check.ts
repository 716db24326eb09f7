// One invoice check from start to end, as the rules worker runs it: the safe read (scan.ts), the
// profile (asked, else declared), the XML schema (CII) and the schematron rule sets the profile
// calls for (profiles.ts), merged into one report. A refused input comes back as data (the
// catalogue code and its fields), so the worker can post it and validate.ts can throw it.
import { CII_ONLY, profileOf, rulesFor } from './profiles.js';
import type { EinvoiceFinding, EinvoiceProfile, EinvoiceReport } from './report.js';
import { RULES_VERSION, parseForRules, runRules, type RuleSet } from './rules.js';
import { scanInvoiceXml } from './scan.js';
import { checkCiiSchema } from './xsd.js';

export type CheckOutcome =
  | { ok: true; report: EinvoiceReport }
  | { ok: false; code: 'einvoice_xml_refused' | 'einvoice_pdf_refused' | 'validation_failed'; message: string; details: Record<string, unknown> };

export async function checkInvoice(xml: string | Uint8Array, asked: EinvoiceProfile | undefined): Promise<CheckOutcome> {
  const scanned = scanInvoiceXml(xml);
  if ('reason' in scanned) {
    const { message, ...details } = scanned;
    return { ok: false, code: 'einvoice_xml_refused', message, details };
  }
  const profile = asked ?? profileOf(scanned.specification);
  if (profile && scanned.syntax === 'UBL' && CII_ONLY.includes(profile)) {
    const message = `profile "${profile}" is a Factur-X / ZUGFeRD profile, which is CII only; this XML is UBL.`;
    return { ok: false, code: 'validation_failed', message: `Request is invalid: ${message}`, details: { fields: [{ field: 'profile', rule: 'syntax', message }] } };
  }
  const choice = rulesFor(profile, scanned.syntax);
  const errors: EinvoiceFinding[] = [];
  const warnings: EinvoiceFinding[] = [];
  const versions: string[] = [];
  if (choice.xsd) {
    const schema = await checkCiiSchema(scanned.text);
    if (schema.notWellFormed) {
      return { ok: false, code: 'einvoice_xml_refused', message: `The XML is not well-formed: ${schema.notWellFormed.message}`, details: { reason: 'not_well_formed', line: schema.notWellFormed.line } };
    }
    errors.push(...schema.errors);
    versions.push(RULES_VERSION.xsd);
  } else {
    versions.push('no XML schema (UBL 2.1 schema not vendored)');
  }
  let doc: unknown;
  try {
    doc = await parseForRules(scanned.text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, code: 'einvoice_xml_refused', message: `The XML is not well-formed: ${message}`, details: { reason: 'not_well_formed' } };
  }
  const syntax = scanned.syntax === 'CII' ? 'cii' : 'ubl';
  const sets: RuleSet[] = [];
  if (choice.en16931) sets.push(`en16931-${syntax}`);
  if (choice.xrechnung) sets.push(`xrechnung-${syntax}`);
  for (const set of sets) {
    const found = runRules(set, doc);
    errors.push(...found.errors);
    warnings.push(...found.warnings);
  }
  if (choice.en16931) versions.push(`${RULES_VERSION.en16931} (${scanned.syntax})`);
  if (choice.xrechnung) versions.push(RULES_VERSION.xrechnung);
  if (!choice.en16931) {
    warnings.push({
      rule: 'PROFILE',
      message: `Factur-X ${profile === 'minimum' ? 'MINIMUM' : 'BASIC WL'} is not an EN 16931 invoice: only the XML schema was checked, not the EN 16931 rules nor the Factur-X profile schematron (not available here).`,
      location: '',
    });
  }
  return { ok: true, report: { profile, syntax: scanned.syntax, valid: errors.length === 0, rules_version: versions.join('; '), errors, warnings } };
}
