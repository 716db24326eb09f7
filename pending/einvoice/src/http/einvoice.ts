// POST /api/v1/einvoice/validate: an invoice XML (CII or UBL), or the one inside a Factur-X PDF,
// checked against the official EN 16931 and XRechnung rules (docs/einvoice.md). Free, keyless
// allowed, limited with POST /api/v1/validate. The rules live in src/einvoice/.
import { EinvoiceReportSchema, EinvoiceValidateBody } from '../einvoice/schemas.js';
import type { Services } from '../services.js';
import { callerOf } from './auth.js';
import type { App } from './types.js';

/** Base64 of the largest PDF taken (20 MB) with room for the JSON around it. */
const BODY_LIMIT = 28 * 1024 * 1024;

export function einvoiceRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/einvoice/validate',
    {
      bodyLimit: BODY_LIMIT,
      config: { auth: 'optional', errors: ['validation_failed', 'einvoice_xml_refused', 'einvoice_pdf_refused', 'validate_rate_limited', 'redis_unavailable'] },
      schema: {
        operationId: 'validateEinvoice',
        summary: 'Check an e-invoice (CII, UBL or a Factur-X PDF) against the official EN 16931 and XRechnung rules',
        description:
          'Send one of `xml`, `xml_base64` or `pdf_base64` (the XML embedded in a Factur-X / ZUGFeRD PDF is checked). Answers 200 with the report, valid or not: `errors` and `warnings` name the rule ids (`BR-CO-10`, `BR-DE-1`, `XSD`). The XML is refused before parsing (422 `einvoice_xml_refused`) when it carries a DOCTYPE or ENTITY declaration, is over 2 MB or nests over 64 deep. Free; shares `QUIRE_VALIDATE_PER_MINUTE` with POST /api/v1/validate.',
        tags: ['einvoice'],
        body: EinvoiceValidateBody,
        response: { 200: EinvoiceReportSchema },
      },
    },
    async (req) => services.einvoice.validate(callerOf(req), req.body),
  );
}
