// Reads a signed PDF's signature back for the tests: the CMS in the gap of its /ByteRange, its
// signature value and the RFC 3161 token of its unsigned attributes (PAdES B-T), which the
// tests verify with `openssl ts -verify`.
import forge from 'node-forge';

const TIMESTAMP_TOKEN = '1.2.840.113549.1.9.16.2.14';

export interface SignatureParts {
  byteRange: [number, number, number, number];
  cms: Buffer;
  signatureValue: Buffer;
  timestampToken: Buffer | undefined;
  /** The OIDs of the signed attributes (PAdES wants signing-certificate-v2, 1.2.840.113549.1.9.16.2.47). */
  signedAttributes: string[];
}

/** The last signature of `pdf`. */
export function signatureOf(pdf: Buffer): SignatureParts {
  const text = pdf.toString('latin1');
  const ranges = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  const last = ranges.at(-1);
  if (!last) throw new Error('no /ByteRange');
  const byteRange = last.slice(1, 5).map(Number) as [number, number, number, number];
  const hex = text.slice(byteRange[0] + byteRange[1] + 1, byteRange[2] - 1).replace(/0+$/, '');
  const cms = Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex');
  const root = forge.asn1.fromDer(forge.util.createBuffer(cms.toString('binary')), false);
  const signedData = ((root.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const signerInfo = (signedData.at(-1)!.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const signature = signerInfo.find((node, i) => i > 3 && node.type === forge.asn1.Type.OCTETSTRING && node.tagClass === forge.asn1.Class.UNIVERSAL)!;
  const unsigned = signerInfo.find((node) => node.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && node.type === 1);
  const signed = signerInfo.find((node) => node.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && node.type === 0);
  const signedAttributes = ((signed?.value as forge.asn1.Asn1[] | undefined) ?? []).map((attr) => forge.asn1.derToOid((attr.value as forge.asn1.Asn1[])[0]!.value as string));
  let timestampToken: Buffer | undefined;
  for (const attr of (unsigned?.value as forge.asn1.Asn1[] | undefined) ?? []) {
    const [type, values] = attr.value as forge.asn1.Asn1[];
    if (forge.asn1.derToOid(type!.value as string) === TIMESTAMP_TOKEN) {
      timestampToken = Buffer.from(forge.asn1.toDer((values!.value as forge.asn1.Asn1[])[0]!).getBytes(), 'binary');
    }
  }
  return { byteRange, cms, signatureValue: Buffer.from(signature.value as string, 'binary'), timestampToken, signedAttributes };
}
