// The asset rules on their own: names, base64, magic bytes and the SVG reader.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { convertSvg } from '../../src/assets/convert.js';
import { checkSvg } from '../../src/assets/svg.js';
import { checkName, decodeBase64, sanitisedSvg, validateAsset } from '../../src/assets/validate.js';
import { ServiceError } from '../../src/errors.js';
import { ASSET_NAME_MAX } from '../../src/asset-name.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/assets/${name}`, import.meta.url));

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return 'ok';
}

const svg = (body: string, root = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">') =>
  Buffer.from(`${root}${body}</svg>`);

describe('asset names', () => {
  test('accepts letters, digits, _ and - with one allowed extension', () => {
    for (const name of ['logo.png', 'Photo_2-b.JPG', 'a.jpeg', 'x.pdf', 'd.svg', `${'a'.repeat(ASSET_NAME_MAX - 4)}.png`]) {
      assert.equal(code(() => checkName(name)), 'ok', name);
    }
  });

  test('hostile names are invalid_asset_filename', () => {
    for (const name of [
      '../etc/passwd.png',
      'dir/logo.png',
      'dir\\logo.png',
      '.hidden.png',
      'a..png',
      'logo\0.png',
      'logo.png\0.txt',
      'logo',
      'logo.tar.png',
      'my logo.png',
      'lögo.png',
      '',
      'main.pdf',
      `${'a'.repeat(ASSET_NAME_MAX - 3)}.png`,
    ]) {
      assert.equal(code(() => checkName(name)), 'invalid_asset_filename', JSON.stringify(name));
    }
  });

  test('other extensions are invalid_asset_format', () => {
    for (const name of ['logo.gif', 'evil.tex', 'x.woff', 'run.sh']) assert.equal(code(() => checkName(name)), 'invalid_asset_format', name);
  });
});

describe('base64', () => {
  test('strict decoding; line breaks allowed', () => {
    assert.deepEqual(decodeBase64('a.png', 'aGVs\nbG8='), Buffer.from('hello'));
    assert.deepEqual(decodeBase64('a.png', 'aGVsbG8'), Buffer.from('hello'));
    for (const bad of ['aGVsbG8*', 'a', 'aGVsbG8=x', 'aGVsbG9=', 'data:image/png;base64,aGVsbG8=', '@@@@', 'aG=VsbG8']) {
      assert.equal(code(() => decodeBase64('a.png', bad)), 'invalid_asset_encoding', bad);
    }
    assert.equal(code(() => decodeBase64('a.png', '')), 'invalid_asset_encoding');
    assert.equal(code(() => decodeBase64('a.png', 42)), 'invalid_asset_encoding');
  });
});

describe('magic bytes', () => {
  const files = { png: fixture('logo.png'), jpg: fixture('photo.jpg'), pdf: fixture('doc.pdf'), svg: fixture('diagram.svg') };

  test('each real file passes under its own extension (jpg and jpeg alike)', () => {
    for (const [ext, data] of Object.entries(files)) assert.equal(code(() => validateAsset(`f.${ext}`, data.toString('base64'))), 'ok', ext);
    assert.equal(code(() => validateAsset('f.jpeg', files.jpg.toString('base64'))), 'ok');
  });

  test('every renamed file is invalid_asset_format', () => {
    for (const [ext, data] of Object.entries(files)) {
      for (const other of ['png', 'jpg', 'pdf', 'svg'].filter((e) => e !== ext)) {
        assert.equal(code(() => validateAsset(`f.${other}`, data.toString('base64'))), 'invalid_asset_format', `${ext} as .${other}`);
      }
    }
    assert.equal(code(() => validateAsset('f.png', Buffer.from('#!/bin/sh\necho hi').toString('base64'))), 'invalid_asset_format');
  });

  test('the error names the asset and what its bytes are', () => {
    try {
      validateAsset('logo.png', files.pdf.toString('base64'));
      assert.fail('accepted');
    } catch (err) {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.details.asset, 'logo.png');
      assert.equal(err.details.detected_format, 'pdf');
      assert.match(err.message, /logo\.png/);
    }
  });
});

describe('SVG reader', () => {
  test('accepts the fixture and removes its DOCTYPE', () => {
    const result = checkSvg(fixture('diagram.svg'));
    assert.ok(result.ok, result.ok ? '' : result.reason);
    assert.ok(!result.sanitised.includes('DOCTYPE'));
    assert.ok(result.sanitised.includes('<rect'));
  });

  const refused: Array<[string, Buffer, RegExp]> = [
    ['entity declarations', Buffer.from('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>'), /internal subset/],
    ['billion laughs', Buffer.from('<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&lol2;</text></svg>'), /internal subset/],
    ['an undeclared entity', svg('<text>&nbsp;</text>'), /entity reference &nbsp;/],
    ['an external image', svg('<image href="http://169.254.169.254/latest/meta-data" width="5" height="5"/>'), /external references/],
    ['a local file image', svg('<image xlink:href="file:///etc/passwd" width="5" height="5"/>', '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'), /external references/],
    ['a relative file', svg('<use href="other.svg#x"/>'), /external references/],
    ['an encoded scheme', svg('<image href="&#102;ile:///etc/passwd"/>'), /external references/],
    ['an SVG data URI', svg('<image href="data:image/svg+xml;base64,PHN2Zy8+"/>'), /external references/],
    ['XInclude', svg('<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd" parse="text"/>'), /XInclude|external/],
    ['CSS url()', svg('<rect style="fill: url(http://evil.example/x)"/>'), /url\(\)/],
    ['CSS @import', svg('<style>@import "http://evil.example/x.css";</style>'), /@import/],
    ['CSS escapes', svg('<style>rect { fill: \\75rl(http://x) }</style>'), /CSS escape/],
    ['a stylesheet PI', Buffer.from('<?xml-stylesheet href="http://evil.example/s.css"?><svg xmlns="http://www.w3.org/2000/svg"/>'), /processing instruction/],
    ['a script', svg('<script>alert(1)</script>'), /script/],
    ['an HTML root', Buffer.from('<html><body>hi</body></html>'), /root element is <html>/],
    ['a missing namespace', Buffer.from('<svg width="1" height="1"></svg>'), /namespace/],
    ['malformed XML', svg('<g><rect></g>'), /does not match/],
    ['unclosed root', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><g/>'), /ends before/],
    ['Latin-1 bytes', Buffer.from([0x3c, 0x73, 0x76, 0x67, 0x3e, 0xe9, 0x3c, 0x2f, 0x73, 0x76, 0x67, 0x3e]), /UTF-8/],
  ];
  for (const [what, data, reason] of refused) {
    test(`refuses ${what}`, () => {
      const result = checkSvg(data);
      assert.equal(result.ok, false, what);
      if (!result.ok) assert.match(result.reason, reason);
    });
  }

  test('allows fragment references, embedded PNG data and hyperlinks', () => {
    const png = fixture('logo.png').toString('base64');
    const result = checkSvg(
      svg(`<defs><g id="a"/></defs><use href="#a"/><image href="data:image/png;base64,${png}" width="5" height="5"/><a href="https://example.com"><text>link</text></a><rect fill="url('#a')"/>`),
    );
    assert.ok(result.ok, result.ok ? '' : result.reason);
  });
});

describe('SVG converter', () => {
  test('converts the fixture to a PDF holding its text', async () => {
    const pdf = await convertSvg('diagram.svg', sanitisedSvg('diagram.svg', fixture('diagram.svg')), { isolate: true });
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.match(execFileSync('pdftotext', ['-', '-'], { input: pdf, encoding: 'utf8' }), /Quire SVG diagram/);
  });

  test('a conversion that runs too long is killed: invalid_asset_format', async () => {
    const started = Date.now();
    await assert.rejects(
      convertSvg('slow.svg', sanitisedSvg('slow.svg', fixture('slow.svg')), { isolate: true, timeoutMs: 300 }),
      (err: unknown) => err instanceof ServiceError && err.code === 'invalid_asset_format' && /longer than 0.3 s/.test(err.message),
    );
    assert.ok(Date.now() - started < 5000);
  });

  test('an SVG the converter cannot render (memory cap) is invalid_asset_format', async () => {
    const heavy = svg('<filter id="f"><feGaussianBlur stdDeviation="500"/></filter><rect width="30000" height="30000" filter="url(#f)"/>', '<svg xmlns="http://www.w3.org/2000/svg" width="30000" height="30000">');
    await assert.rejects(
      convertSvg('heavy.svg', sanitisedSvg('heavy.svg', heavy), { isolate: true }),
      (err: unknown) => err instanceof ServiceError && err.code === 'invalid_asset_format' && err.details.asset === 'heavy.svg',
    );
  });
});
