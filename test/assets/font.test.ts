// The sfnt table-directory check of font assets (src/assets/font.ts): a real OpenType font,
// a TrueType collection built from it, and damaged copies; random bytes never throw.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { checkFont } from '../../src/assets/font.js';
import { checkContent } from '../../src/assets/validate.js';

const FONT = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'assets', 'Brand-Regular.otf'));

function collectionOf(font: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.write('ttcf', 0, 'latin1');
  header.writeUInt32BE(0x00010000, 4);
  header.writeUInt32BE(1, 8);
  header.writeUInt32BE(16, 12);
  // Table offsets are from the start of the file: shift every record by the header's 16 bytes.
  const face = Buffer.from(font);
  for (let i = 0; i < face.readUInt16BE(4); i++) face.writeUInt32BE(face.readUInt32BE(12 + i * 16 + 8) + 16, 12 + i * 16 + 8);
  return Buffer.concat([header, face]);
}

describe('font assets', () => {
  test('a real OpenType font and a collection of it parse', () => {
    assert.equal(checkFont(FONT), null);
    assert.equal(checkFont(collectionOf(FONT)), null);
    checkContent('Brand.otf', 'otf', FONT);
    checkContent('Brand.ttc', 'ttc', collectionOf(FONT));
  });

  test('damaged fonts name what is wrong', () => {
    assert.equal(checkFont(FONT.subarray(0, 8)), 'the file is shorter than a font header');
    assert.equal(checkFont(FONT.subarray(0, 40)), 'the table directory is truncated');
    const tooMany = Buffer.from(FONT);
    tooMany.writeUInt16BE(0, 4);
    assert.equal(checkFont(tooMany), 'the font claims 0 tables');
    const outside = Buffer.from(FONT);
    outside.writeUInt32BE(FONT.length, 12 + 8);
    assert.match(checkFont(outside) ?? '', /^table ".*" lies outside the file$/);
    const renamed = Buffer.from(FONT);
    for (let i = 0; i < renamed.readUInt16BE(4); i++) if (renamed.toString('latin1', 12 + i * 16, 16 + i * 16) === 'cmap') renamed.write('xmap', 12 + i * 16, 'latin1');
    assert.equal(checkFont(renamed), 'required tables missing: cmap');
    const collection = collectionOf(FONT);
    collection.writeUInt32BE(1000, 8);
    assert.equal(checkFont(collection), 'the collection claims 1000 fonts');
  });

  test('a font with a wrong extension or no font at all is invalid_asset_format', () => {
    assert.throws(() => checkContent('Brand.otf', 'otf', Buffer.from('not a font')), { code: 'invalid_asset_format' });
    assert.throws(() => checkContent('Brand.ttc', 'ttc', FONT), { code: 'invalid_asset_format' });
    assert.throws(() => checkContent('Brand.otf', 'otf', Buffer.concat([Buffer.from('OTTO'), Buffer.alloc(100)])), { code: 'invalid_asset_format' });
  });

  test('any bytes after a font magic: an answer, never an exception', () => {
    fc.assert(
      fc.property(fc.constantFrom('OTTO', 'true', 'ttcf', '\0\x01\0\0'), fc.uint8Array({ maxLength: 600 }), (magic, rest) => {
        const result = checkFont(Buffer.concat([Buffer.from(magic, 'latin1'), Buffer.from(rest)]));
        assert.ok(result === null || typeof result === 'string');
      }),
      { numRuns: 2000 },
    );
  });
});
