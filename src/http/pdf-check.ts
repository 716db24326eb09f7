// POST /api/v1/pdf/check: the conformance checks of a compile's report on a PDF the caller
// sends (issue 40, docs/pdf-output.md). The rules live in PdfCheckService.
import { PdfCheckBody, PdfCheckResponse } from '../compile/pdf-check.js';
import type { Services } from '../services.js';
import { callerOf } from './auth.js';
import type { App } from './types.js';

export function pdfCheckRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/pdf/check',
    {
      config: { auth: 'optional', errors: ['validation_failed', 'pdf_check_too_large', 'validate_rate_limited', 'redis_unavailable', 'server_busy'] },
      schema: {
        operationId: 'checkPdf',
        summary: 'Run the conformance checks (tagging, PDF/UA, PDF/A structure) on a PDF',
        description:
          'Extension (issue 40). Takes `pdf_base64` and optionally `standards` (e.g. ["ua-2"]; by default those the XMP claims). Answers `conformance: {standards, checks: [{id, passed, detail}], violations, validators}` from qpdf and pdfinfo run in a sandbox: structure tree root, /MarkInfo /Marked, /Lang, /DisplayDocTitle, XMP dc:title, pdfuaid and pdfaid, figures with /Alt, heading levels, table header cells, pages with /StructParents, annotation tab order, fonts embedded and mapped to Unicode. Necessary conditions, not a certification. Free; shares `QUIRE_VALIDATE_PER_MINUTE`; at most `QUIRE_PDF_CHECK_MAX_MB` (413 pdf_check_too_large). Nothing is stored.',
        tags: ['compile'],
        body: PdfCheckBody,
        response: { 200: PdfCheckResponse },
      },
    },
    async (req) => services.pdfCheck.check(callerOf(req), req.body),
  );
}
