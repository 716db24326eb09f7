// Sealing of stored signing identities: AES-256-GCM under a key derived from the server secret
// (QUIRE_SECRET, or the data dir's generated one) with HKDF-SHA256 for this purpose only. The
// account and the identity's name are the additional data, so a sealed value copied into
// another account's row (or renamed) does not open. A changed server secret makes stored
// identities unreadable (they must be uploaded again): docs/pdf-output.md#stored-identities.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const INFO = 'quire signing identities v1';

export interface SealedSecret {
  p12: Buffer;
  password: string;
}

export class Sealer {
  private readonly key: Buffer;
  constructor(serverSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', serverSecret, 'quire', INFO, 32));
  }

  seal(secret: SealedSecret, accountId: number, nameLower: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(accountId, nameLower));
    const plain = Buffer.from(JSON.stringify({ p12: secret.p12.toString('base64'), password: secret.password }));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    plain.fill(0);
    return `${VERSION}.${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${body.toString('base64')}`;
  }

  /** The secret, or undefined when it does not open (another server secret, a tampered or moved row). */
  open(sealed: string, accountId: number, nameLower: string): SealedSecret | undefined {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
      decipher.setAAD(aad(accountId, nameLower));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]);
      const parsed = JSON.parse(plain.toString('utf8')) as { p12: string; password: string };
      plain.fill(0);
      return { p12: Buffer.from(parsed.p12, 'base64'), password: parsed.password };
    } catch {
      return undefined;
    }
  }
}

function aad(accountId: number, nameLower: string): Buffer {
  return Buffer.from(`${accountId}\0${nameLower}`);
}
