// Writes the PAdES signature into a finished PDF with @libpdf/core (docs/decisions.md: why this
// library): an invisible signature field, SubFilter ETSI.CAdES.detached with the
// signing-certificate-v2 attribute (PAdES B-B), plus an RFC 3161 timestamp token on the
// signature value for B-T. Written as one incremental update: the unsigned PDF is a byte prefix
// of the signed one (checked here), so what was validated before (PDF/A) is what was signed.
import { PDF, PdfArray, PdfDict, PdfName, PdfNumber, PdfStream, type Signer } from '@libpdf/core';
import { timestampAuthority, tsaFailed, type TsaSettings } from './tsa.js';

export interface SignFields {
  reason?: string;
  location?: string;
  contactInfo?: string;
}

export class SigningFailed extends Error {}

const FIELD = 'Signature1';

/**
 * The invisible signature field, made before signing so its widget has an appearance: PDF/A
 * (ISO 19005-1 6.5.3, PDFBox Preflight 5.3.1) wants an /AP on every widget, even one with an
 * empty rectangle; the library's own field has none. An empty form XObject is the appearance.
 */
function invisibleField(doc: PDF): string {
  const form = doc.getOrCreateForm();
  // A document's own form may already use the name (hyperref fields, a signature field of its own).
  const taken = new Set(form.getFields().map((field) => field.name));
  let name = FIELD;
  for (let n = 2; taken.has(name); n++) name = `${FIELD}_${n}`;
  const appearance = doc.register(PdfStream.fromDict({ Type: PdfName.of('XObject'), Subtype: PdfName.of('Form'), BBox: new PdfArray([0, 0, 0, 0].map((n) => PdfNumber.of(n))) }, new Uint8Array()));
  form.createSignatureField(name).getDict().set('AP', PdfDict.of({ N: appearance }));
  return name;
}

/** Room for the CMS in /Contents: the certificates, the signature, and a TSA token with its certificates. */
function placeholderBytes(signer: Signer, timestamped: boolean): number {
  const certs = [signer.certificate, ...(signer.certificateChain ?? [])].reduce((sum, der) => sum + der.length, 0);
  return 4096 + certs + (timestamped ? 16384 : 0);
}

export async function signPdf(pdf: Buffer, signer: Signer, fields: SignFields, tsa: TsaSettings | undefined, now: Date): Promise<Buffer> {
  let doc: PDF;
  try {
    doc = await PDF.load(pdf);
  } catch (err) {
    throw new SigningFailed(`the PDF could not be read for signing (${err instanceof Error ? err.message.slice(0, 200) : 'unknown'})`);
  }
  let fieldName: string;
  try {
    fieldName = invisibleField(doc);
  } catch (err) {
    throw new SigningFailed(`the PDF's form could not take a signature field (${err instanceof Error ? err.message.slice(0, 200) : 'unknown'})`);
  }
  const timestamp = tsa ? timestampAuthority(tsa) : undefined;
  let signed: Uint8Array;
  try {
    const result = await doc.sign({
      signer,
      subFilter: 'ETSI.CAdES.detached',
      digestAlgorithm: 'SHA-256',
      signingTime: now,
      fieldName,
      estimatedSize: placeholderBytes(signer, timestamp !== undefined),
      ...(fields.reason ? { reason: fields.reason } : {}),
      ...(fields.location ? { location: fields.location } : {}),
      ...(fields.contactInfo ? { contactInfo: fields.contactInfo } : {}),
      ...(timestamp ? { timestampAuthority: timestamp.authority, level: 'B-T' as const } : {}),
    });
    signed = result.bytes;
  } catch (err) {
    const refused = timestamp?.failure();
    if (refused) throw refused;
    if (timestamp && err instanceof Error && /timestamp|TSA/i.test(err.constructor.name + err.message)) throw tsaFailed(err.message.slice(0, 200), true);
    throw new SigningFailed(`the PDF could not be signed (${err instanceof Error ? err.message.slice(0, 200) : 'unknown'})`);
  }
  const out = Buffer.from(signed.buffer, signed.byteOffset, signed.byteLength);
  // The promise of an incremental update, held: anything else would change what was validated.
  if (out.length <= pdf.length || !out.subarray(0, pdf.length).equals(pdf)) throw new SigningFailed('the signed PDF does not keep the unsigned one as its prefix');
  return out;
}
