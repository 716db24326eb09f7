// API keys: prefix + 48 hex characters from a CSPRNG. Only the SHA-256 is ever stored.
import { createHash, randomBytes } from 'node:crypto';

export function generateKey(prefix: string): string {
  return prefix + randomBytes(24).toString('hex');
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function isWellFormedKey(key: string, prefix: string): boolean {
  return key.length === prefix.length + 48 && key.startsWith(prefix) && /^[0-9a-f]{48}$/.test(key.slice(prefix.length));
}

/** What Usage shows of a key: the prefix and its first 8 hex characters. */
export function displayPrefix(key: string, prefix: string): string {
  return key.slice(0, prefix.length + 8);
}
