// POST /api/v1/einvoice/validate and the validate_einvoice MCP tool: reads the request (one of
// xml, xml_base64, pdf_base64), charges the caller's validate minute window (free, shared with
// POST /api/v1/validate: QUIRE_VALIDATE_PER_MINUTE) and answers the report (validate.ts).
import type { Static } from '@sinclair/typebox';
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import { invalidField } from '../errors.js';
import type { Counters } from '../quota/counters.js';
import { chargeValidate } from '../quota/validate-limit.js';
import type { EinvoiceValidateBody } from './schemas.js';
import { validateInvoicePdf, validateInvoiceXml, type EinvoiceReport } from './validate.js';

type Input = Static<typeof EinvoiceValidateBody>;

const SOURCES = ['xml', 'xml_base64', 'pdf_base64'] as const;

export class EinvoiceValidateService {
  constructor(private readonly deps: { counters: Counters; clock: Clock; perMinute: () => number }) {}

  async validate(caller: Caller, input: Input): Promise<EinvoiceReport> {
    const given = SOURCES.filter((key) => input[key] !== undefined);
    if (given.length !== 1) {
      throw invalidField(given[1] ?? 'xml', 'one_of', given.length === 0 ? 'is required: send one of xml, xml_base64, pdf_base64' : `cannot be sent with ${given[0]}: send one of xml, xml_base64, pdf_base64`);
    }
    const key = given[0]!;
    const bytes = key === 'xml' ? null : decodeBase64(key, input[key]!);
    await chargeValidate(this.deps.counters, this.deps.clock.now(), caller, this.deps.perMinute());
    const opts = input.profile ? { profile: input.profile } : {};
    if (key === 'pdf_base64') return validateInvoicePdf(bytes!, opts);
    return validateInvoiceXml(bytes ?? input.xml!, opts);
  }
}

/** Strict base64 (whitespace allowed, padding optional): Buffer.from would skip any bad character. */
function decodeBase64(field: string, text: string): Uint8Array {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw invalidField(field, 'base64', 'must be base64');
  }
  return new Uint8Array(Buffer.from(compact, 'base64'));
}
