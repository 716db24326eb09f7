// The one base64 reading every request field uses (src/base64.ts): what it accepts decodes to
// exactly the bytes that were encoded, its byte count (used to refuse oversized values before
// decoding) is exact, and what Node would quietly mangle is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeCompact, readBase64 } from '../src/base64.js';

test('any bytes, encoded and wrapped at any width, read back exactly and count exactly', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 80 }), fc.boolean(), (bytes, width, unpadded) => {
      let text = Buffer.from(bytes).toString('base64');
      if (unpadded) text = text.replace(/=+$/, '');
      const wrapped = text.replace(new RegExp(`(.{${width}})`, 'g'), '$1\r\n');
      const reading = readBase64(wrapped);
      assert.ok(reading.ok);
      assert.equal(reading.bytes, bytes.length);
      assert.deepEqual(decodeCompact(reading.compact), Buffer.from(bytes));
    }),
    { numRuns: 300 },
  );
});

test('text outside the alphabet, impossible lengths and misplaced padding are refused', () => {
  for (const bad of ['QQ=?', 'data:application/pdf;base64,QQ==', 'QUJD-', 'Q', 'QUJDR', 'QQ=', 'Q===', 'QQ==QQ==', 'QU_D']) {
    assert.deepEqual(readBase64(bad), { ok: false }, bad);
  }
});

test('stray trailing bits, which Node would drop silently, are not decoded', () => {
  // Negative control: Node itself decodes "QR==" to the same byte as "QQ==".
  assert.deepEqual(Buffer.from('QR==', 'base64'), Buffer.from('QQ==', 'base64'));
  const reading = readBase64('QR==');
  assert.ok(reading.ok);
  assert.equal(decodeCompact(reading.compact), undefined);
  assert.deepEqual(decodeCompact('QQ=='), Buffer.from('A'));
});
