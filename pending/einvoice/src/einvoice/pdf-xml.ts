// The invoice XML inside an uploaded Factur-X / ZUGFeRD / XRechnung PDF: the embedded file named
// factur-x.xml, zugferd-invoice.xml (ZUGFeRD 2.x), ZUGFeRD-invoice.xml (1.0) or xrechnung.xml,
// read in process with @libpdf/core in the rules worker (never on the event loop). The declared
// (uncompressed) size is checked before the stream is inflated, and the result again after.
import { PDF } from '@libpdf/core';
import type { CheckOutcome } from './check.js';
import { XML_MAX_BYTES } from './scan.js';

/** Largest PDF taken (bytes). */
export const PDF_MAX_BYTES = 20 * 1024 * 1024;
export const INVOICE_FILE_NAMES = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml'];

type Refused = Extract<CheckOutcome, { ok: false }>;

export async function xmlFromPdf(pdf: Uint8Array): Promise<{ ok: true; xml: Uint8Array } | Refused> {
  if (pdf.byteLength > PDF_MAX_BYTES) return refuse('too_large', `The PDF is ${pdf.byteLength} bytes; at most ${PDF_MAX_BYTES} are taken.`, { limit: PDF_MAX_BYTES });
  if (!startsWithPdf(pdf)) return refuse('not_pdf', 'The upload is not a PDF (no %PDF- header).');
  let doc: PDF;
  try {
    doc = await PDF.load(pdf);
  } catch (err) {
    return refuse('unreadable', `The PDF could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  let list: Map<string, { name: string; filename: string; size?: number }>;
  try {
    list = doc.attachments.list();
  } catch (err) {
    return refuse('unreadable', `The PDF's embedded files could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const names = [...list.values()].map((info) => info.filename || info.name);
  const chosen = [...list.values()].find((info) => INVOICE_FILE_NAMES.includes((info.filename || info.name).toLowerCase()));
  if (!chosen) {
    return refuse('no_invoice_xml', `The PDF carries no ${INVOICE_FILE_NAMES.join(', ')}${names.length ? ` (its embedded files: ${names.slice(0, 20).join(', ')})` : ' (no embedded file)'}.`, {
      attachments: names.slice(0, 20),
    });
  }
  if (chosen.size !== undefined && chosen.size > XML_MAX_BYTES) {
    return { ok: false, code: 'einvoice_xml_refused', message: `The embedded ${chosen.filename} declares ${chosen.size} bytes; at most ${XML_MAX_BYTES} are taken.`, details: { reason: 'too_large', limit: XML_MAX_BYTES } };
  }
  let xml: Uint8Array | null;
  try {
    xml = await doc.attachments.get(chosen.name);
  } catch (err) {
    return refuse('unreadable', `The embedded ${chosen.filename} could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!xml) return refuse('unreadable', `The embedded ${chosen.filename} has no content.`);
  return { ok: true, xml };
}

function startsWithPdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  return head.includes('%PDF-');
}

function refuse(reason: string, message: string, extra: Record<string, unknown> = {}): Refused {
  return { ok: false, code: 'einvoice_pdf_refused', message, details: { reason, ...extra } };
}
