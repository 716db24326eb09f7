// Opens a PKCS#12 (inline in output.sign, or a stored identity's) into a signer for
// @libpdf/core, and reads what the identity list shows. Every refusal is a 4xx catalogue code
// whose message never quotes the password or the file. The key stays in this process: it is
// a WebCrypto key (non-extractable) and is never written anywhere.
import { createHash, verify, X509Certificate } from 'node:crypto';
import { P12Signer, type DigestAlgorithm, type KeyType, type SignatureAlgorithm, type Signer } from '@libpdf/core';
import { BASE64_RULE, decodeCompact, readBase64 } from '../base64.js';
import { errors, validationFailed } from '../errors.js';
import { P12_MAX_BYTES } from './schema.js';

export interface IdentityFacts {
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
  key_type: string;
}

export interface OpenedIdentity {
  signer: Signer;
  facts: IdentityFacts;
}

/** The PKCS#12 bytes of a base64 field, or invalid_pkcs12 (reason base64, size or format). */
export function decodeP12(raw: string, field: string): Buffer {
  const reading = readBase64(raw);
  if (!reading.ok || reading.bytes === 0) throw errors.invalid_pkcs12(`${field} is ${BASE64_RULE}.`, { field, reason: 'base64' });
  // Refused from its length, before a byte is decoded.
  if (reading.bytes > P12_MAX_BYTES) {
    throw validationFailed([{ field, rule: 'maxBytes', limit: P12_MAX_BYTES, message: `must decode to at most ${P12_MAX_BYTES} bytes` }]);
  }
  const bytes = decodeCompact(reading.compact);
  if (!bytes) throw errors.invalid_pkcs12(`${field} is not valid base64 (it does not decode cleanly).`, { field, reason: 'base64' });
  // A PFX is a DER SEQUENCE: anything else is refused before the parser sees it.
  if (bytes[0] !== 0x30) throw errors.invalid_pkcs12(`${field} is not a PKCS#12 file.`, { field, reason: 'format' });
  return bytes;
}

/**
 * The signer of a PKCS#12 and its certificate's facts. `now` bounds the certificate's validity:
 * a signature made outside it would not verify, so it is refused (422) before anything runs.
 */
export async function openIdentity(p12: Buffer, password: string, field: string, now: Date): Promise<OpenedIdentity> {
  let opened: P12Signer;
  try {
    opened = await P12Signer.create(p12, password);
  } catch (err) {
    // The parser's words may name structures, never the password; still, only our own words leave.
    const message = err instanceof Error ? err.message : '';
    if (/integrity|mac|password/i.test(message)) throw errors.pkcs12_password_incorrect(`The password of ${field} is wrong.`, { field });
    if (/no private key/i.test(message)) throw errors.invalid_pkcs12(`${field} holds no private key.`, { field, reason: 'no_private_key' });
    if (/no certificates/i.test(message)) throw errors.invalid_pkcs12(`${field} holds no certificate.`, { field, reason: 'no_certificate' });
    if (/unsupported key/i.test(message)) throw errors.invalid_pkcs12(`${field} holds a key of a type that cannot sign here (RSA and EC can).`, { field, reason: 'key_type' });
    throw errors.invalid_pkcs12(`${field} is not a PKCS#12 file this service can read.`, { field, reason: 'format' });
  }
  const all = [opened.certificate, ...opened.certificateChain];
  const own = await matchingCertificate(opened, all);
  if (own === undefined) throw errors.invalid_pkcs12(`${field}: no certificate in it belongs to its private key.`, { field, reason: 'no_matching_certificate' });
  const cert = new X509Certificate(all[own]!);
  const facts: IdentityFacts = {
    subject: cert.subject.split('\n').join(', '),
    issuer: cert.issuer.split('\n').join(', '),
    not_before: new Date(cert.validFrom).toISOString(),
    not_after: new Date(cert.validTo).toISOString(),
    fingerprint_sha256: createHash('sha256').update(cert.raw).digest('hex').toUpperCase().match(/../g)!.join(':'),
    key_type: opened.keyType,
  };
  checkValidity(facts, field, now);
  const chain = all.filter((_, i) => i !== own);
  return { signer: new ChosenSigner(opened, all[own]!, chain), facts };
}

export function checkValidity(facts: IdentityFacts, field: string, now: Date): void {
  const details = { field, not_before: facts.not_before, not_after: facts.not_after };
  if (now.getTime() > Date.parse(facts.not_after)) {
    throw errors.signing_certificate_not_valid(`The certificate of ${field} expired on ${facts.not_after}.`, { ...details, reason: 'expired' });
  }
  if (now.getTime() < Date.parse(facts.not_before)) {
    throw errors.signing_certificate_not_valid(`The certificate of ${field} is valid only from ${facts.not_before}.`, { ...details, reason: 'not_yet_valid' });
  }
}

/**
 * Which certificate holds the key's public half: the parser takes the file's first certificate,
 * which in a file with its chain may be the CA's. One test signature (a millisecond) decides.
 */
async function matchingCertificate(signer: Signer, certs: Uint8Array[]): Promise<number | undefined> {
  const probe = Buffer.from('quire signing identity probe');
  const signature = Buffer.from(await signer.sign(probe, 'SHA-256'));
  const found = certs.findIndex((der) => {
    try {
      const key = new X509Certificate(der).publicKey;
      return verify('sha256', probe, signer.keyType === 'EC' ? { key, dsaEncoding: 'der' } : key, signature);
    } catch {
      return false;
    }
  });
  return found === -1 ? undefined : found;
}

/** The opened key with the certificate that belongs to it, the others as its chain. */
class ChosenSigner implements Signer {
  readonly keyType: KeyType;
  readonly signatureAlgorithm: SignatureAlgorithm;
  constructor(
    private readonly inner: Signer,
    readonly certificate: Uint8Array,
    readonly certificateChain: Uint8Array[],
  ) {
    this.keyType = inner.keyType;
    this.signatureAlgorithm = inner.signatureAlgorithm;
  }
  sign(data: Uint8Array, algorithm: DigestAlgorithm): Promise<Uint8Array> {
    return this.inner.sign(data, algorithm);
  }
}
