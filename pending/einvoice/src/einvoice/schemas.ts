// The wire shapes of POST /api/v1/einvoice/validate and the validate_einvoice MCP tool, declared
// once (TypeBox): the request (one of `xml`, `xml_base64`, `pdf_base64`, and an optional
// `profile`) and the report (report.ts).
import { Type } from '@sinclair/typebox';
import { EINVOICE_PROFILES } from './report.js';

const Profile = Type.Unsafe<(typeof EINVOICE_PROFILES)[number]>({
  type: 'string',
  enum: [...EINVOICE_PROFILES],
  description: 'Check against this profile; default: the one the XML declares (BT-24: the CII guideline id or the UBL CustomizationID), else the EN 16931 rules',
});

export const EinvoiceValidateBody = Type.Object(
  {
    xml: Type.Optional(Type.String({ description: 'The CII or UBL invoice XML as text (UTF-8, at most 2 MB)' })),
    xml_base64: Type.Optional(Type.String({ description: 'The same, base64-encoded' })),
    pdf_base64: Type.Optional(Type.String({ description: 'A Factur-X / ZUGFeRD / XRechnung PDF (at most 20 MB), base64: its embedded factur-x.xml, zugferd-invoice.xml or xrechnung.xml is checked' })),
    profile: Type.Optional(Profile),
  },
  { additionalProperties: false, description: 'Exactly one of `xml`, `xml_base64`, `pdf_base64`.' },
);

const Finding = Type.Object({
  rule: Type.String({ description: 'The rule id (`BR-CO-10`, `BR-DE-1`, `CII-SR-001`), or `XSD` for the XML schema, `PROFILE` for a note on the profile' }),
  message: Type.String({ description: "The rule's own text" }),
  location: Type.String({ description: 'Where: an XPath for a schematron rule, `line N` for the XML schema' }),
});

export const EinvoiceReportSchema = Type.Object({
  profile: Type.Union([Type.String(), Type.Null()], { description: 'The profile checked (asked for, else declared), or null: EN 16931 rules only' }),
  syntax: Type.Union([Type.Literal('CII'), Type.Literal('UBL')]),
  valid: Type.Boolean({ description: 'No error (warnings do not count)' }),
  rules_version: Type.String({ description: 'The rule sets that ran, with their versions' }),
  errors: Type.Array(Finding, { description: 'Rules with flag fatal or error, and XML schema errors' }),
  warnings: Type.Array(Finding, { description: 'Rules with flag warning or information' }),
});
