// check_pdf: POST /api/v1/pdf/check as a tool (an extension tool: listed with ?extensions=1).
import { PdfCheckBody, PdfCheckResponse } from '../../compile/pdf-check.js';
import { callerOf, defineTool } from '../tool.js';

export const checkPdfTool = defineTool({
  name: 'check_pdf',
  title: 'Check a PDF for tagging, PDF/UA and PDF/A structure (free)',
  description: [
    'Runs the checks of a compile\'s conformance report on a PDF you send as base64: structure tree, /MarkInfo, /Lang, title shown, XMP pdfuaid/pdfaid, figures with alt text, heading levels, table header cells, fonts embedded with Unicode maps.',
    'Returns `conformance.checks` ({id, passed, detail}) and `violations`. These are necessary conditions, not a certification. Free, rate-limited like validate.',
  ].join(' '),
  inputSchema: PdfCheckBody,
  outputSchema: PdfCheckResponse,
  auth: 'optional',
  public: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.pdfCheck.check(callerOf(context), args),
  summarize: (body) => {
    const failed = body.conformance.checks.filter((c) => !c.passed);
    const head = `${body.pages} page(s); ${body.conformance.checks.length - failed.length} of ${body.conformance.checks.length} checks passed${body.conformance.standards.length ? ` (standards: ${body.conformance.standards.join(', ')})` : ''}.`;
    return [head, ...failed.map((c) => `- ${c.id}: ${c.detail}`)].join('\n');
  },
});
