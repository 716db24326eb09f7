// Test certificates made at test time with node-forge (keys from node:crypto, which is fast):
// a self-signed CA, leaves it issues (valid, expired, not yet valid, a TSA's), and PKCS#12
// files in the legacy (3DES) and modern (AES-256) encodings.
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface Pki {
  key: forge.pki.rsa.PrivateKey;
  cert: forge.pki.Certificate;
  /** PEM of the certificate, for verifiers (openssl). */
  pem: string;
}

const DAY = 86_400_000;
let serial = 1;

function rsaKey(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

function issue(subject: string, issuer: Pki | undefined, options: { from: Date; to: Date; ca?: boolean; tsa?: boolean }): Pki {
  const keys = rsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = (0x1000 + serial++).toString(16);
  cert.validity.notBefore = options.from;
  cert.validity.notAfter = options.to;
  const name = [{ name: 'commonName', value: subject }, { name: 'organizationName', value: 'Quire Test' }, { name: 'countryName', value: 'DE' }];
  cert.setSubject(name);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: options.ca ?? false, critical: true },
    options.ca ? { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true } : { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    ...(options.tsa ? [{ name: 'extKeyUsage', timeStamping: true, critical: true }] : []),
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(issuer ? issuer.key : keys.privateKey, forge.md.sha256.create());
  return { key: keys.privateKey, cert, pem: forge.pki.certificateToPem(cert) };
}

export function makeCa(name = 'Quire Test CA'): Pki {
  return issue(name, undefined, { from: new Date(Date.now() - 10 * DAY), to: new Date(Date.now() + 3650 * DAY), ca: true });
}

/** A leaf the CA issues; `days` shifts its validity (negative: expired; `future`: not yet valid). */
export function makeLeaf(ca: Pki, name: string, validity: 'valid' | 'expired' | 'future' = 'valid', options: { tsa?: boolean } = {}): Pki {
  const now = Date.now();
  const [from, to] = validity === 'valid' ? [now - DAY, now + 365 * DAY] : validity === 'expired' ? [now - 400 * DAY, now - 30 * DAY] : [now + 30 * DAY, now + 400 * DAY];
  return issue(name, ca, { from: new Date(from), to: new Date(to), ...options });
}

/** A PKCS#12 (base64) with the key (unless `withoutKey`) and the certificates, leaf first unless `caFirst`. */
export function p12(leaf: Pki, chain: Pki[], password: string, options: { algorithm?: '3des' | 'aes256'; withoutKey?: boolean; caFirst?: boolean } = {}): string {
  const certs = options.caFirst ? [...chain.map((c) => c.cert), leaf.cert] : [leaf.cert, ...chain.map((c) => c.cert)];
  const asn1 = forge.pkcs12.toPkcs12Asn1(options.withoutKey ? null : leaf.key, certs, password, { algorithm: options.algorithm ?? 'aes256', generateLocalKeyId: true, friendlyName: 'signer' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary').toString('base64');
}
