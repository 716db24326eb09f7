// validate_einvoice: POST /api/v1/einvoice/validate as a tool (docs/einvoice.md).
import { EinvoiceReportSchema, EinvoiceValidateBody } from '../../einvoice/schemas.js';
import { callerOf, defineTool } from '../tool.js';

export const validateEinvoiceTool = defineTool({
  name: 'validate_einvoice',
  title: 'Check an e-invoice against the EN 16931 / XRechnung rules (free)',
  description: [
    'Checks a CII or UBL invoice XML (`xml`, or `xml_base64`), or the XML inside a Factur-X / ZUGFeRD PDF (`pdf_base64`), against the XML schema and the official EN 16931 schematron (and KoSIT XRechnung rules for that profile). Free, no quota.',
    'Returns `valid`, `errors` and `warnings`, each with the rule id (`BR-CO-10`: totals, `BR-07`: buyer name, …), its text and an XPath location: fix every error and check again.',
  ].join(' '),
  inputSchema: EinvoiceValidateBody,
  outputSchema: EinvoiceReportSchema,
  auth: 'optional',
  public: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.einvoice.validate(callerOf(context), args),
  summarize: (body) => {
    const head = `${body.valid ? 'Valid' : 'Not valid'} ${body.syntax} invoice${body.profile ? ` (profile ${body.profile})` : ''}; rules: ${body.rules_version}.`;
    const lines = [...body.errors.map((f) => `- error ${f.rule}: ${f.message}`), ...body.warnings.map((f) => `- warning ${f.rule}: ${f.message}`)];
    return [head, ...lines.slice(0, 50), ...(lines.length > 50 ? [`… and ${lines.length - 50} more`] : [])].join('\n');
  },
});
