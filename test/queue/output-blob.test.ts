// The output step as it crosses the blob store to a BullMQ worker (queue/contract.ts): every
// byte field (attachments, the watermark asset's PDF) comes back as the same Buffer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeOutput, encodeOutput } from '../../src/queue/contract.js';
import type { OutputSpec } from '../../src/tex/output/spec.js';

test('encodeOutput and decodeOutput keep attachments and the stamp PDF byte for byte', () => {
  const output: OutputSpec = {
    metadata: { title: 'T' },
    attachments: [{ name: 'factur-x.xml', data: Buffer.from('<x>é</x>'), relationship: 'Data', mimeType: 'text/xml' }],
    stamp: { pdf: Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]), underlay: true, pages: [2] },
    pageImages: { pages: [1], dpi: 72, maxPages: 1 },
  };
  const back = decodeOutput(encodeOutput(output));
  assert.deepEqual(back, output);
  assert.ok(Buffer.isBuffer(back.stamp!.pdf) && Buffer.isBuffer(back.attachments![0]!.data));
});
