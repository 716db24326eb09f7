// The shape of an e-invoice validation report (issue 41, docs/einvoice.md): what the official
// EN 16931 rules (and KoSIT's XRechnung rules for that profile) and the XML schema said about one
// CII or UBL invoice. The build side (output.einvoice) and the validate door both answer with it.

/** The Factur-X / ZUGFeRD profiles, and XRechnung (CII or UBL). */
export const EINVOICE_PROFILES = ['minimum', 'basic-wl', 'basic', 'en16931', 'extended', 'xrechnung'] as const;
export type EinvoiceProfile = (typeof EINVOICE_PROFILES)[number];

/** One failed rule: its id (`BR-CO-10`, `CII-SR-001`, `BR-DE-1`, `XSD`), the rule's text, and where (an XPath, or line:column for the schema). */
export interface EinvoiceFinding {
  rule: string;
  message: string;
  location: string;
}

export interface EinvoiceReport {
  /** The profile checked: the one asked for, else the one the XML declares (its guideline / CustomizationID), else null (EN 16931 rules only). */
  profile: string | null;
  syntax: 'CII' | 'UBL';
  /** True when there is no error (warnings do not count). */
  valid: boolean;
  /** The rule sets that ran, with their versions (e.g. `EN16931 1.3.14; XRechnung 2.3.0; CII D16B XSD`). */
  rules_version: string;
  /** Flag fatal or error, and schema errors. */
  errors: EinvoiceFinding[];
  /** Flag warning or information. */
  warnings: EinvoiceFinding[];
}

export interface ValidateInvoiceOptions {
  profile?: EinvoiceProfile;
}
