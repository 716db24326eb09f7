// A project_zip that carries binaries of no asset type (the slides' .pptx, a .xlsx of the
// data, a zipped supplement) compiles as latexmk compiles the folder: TeX never reads them,
// so they are skipped, not taken for text and refused (they were: invalid_asset_format for
// the NUL in a .pptx). Found by the real-project corpus (Uni Stuttgart dissertation template,
// shared/ustutt-logo.pptx). A .tex holding a NUL is skipped the same way: the document that
// inputs it fails as TeX fails on a file it cannot read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { zipSync } from 'fflate';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const text = (s: string) => new TextEncoder().encode(s);
// The first bytes of an Office (zip) file and of a gzip stream: NULs among them.
const PPTX = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00]);
const GZ = new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]);

describe('project_zip: binaries TeX does not read are skipped', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const compileZip = (entries: Record<string, Uint8Array>) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { project_zip: Buffer.from(zipSync(entries)).toString('base64') }, headers: account.headers });

  test('a .pptx, a .xlsx and a .gz beside the chapters: 200 with the document', async () => {
    const res = await compileZip({
      'thesis/main.tex': text('\\documentclass{article}\n\\begin{document}\n\\input{chapters/intro}\n\\end{document}\n'),
      'thesis/chapters/intro.tex': text('Introduction.\n'),
      'thesis/shared/logo.pptx': PPTX,
      'thesis/data/results.xlsx': PPTX,
      'thesis/supplement.tar.gz': GZ,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().pages, 1);
  });

  test('a .tex holding a NUL is no text either: the document that inputs it fails to compile (422), with a diagnosis', async () => {
    const res = await compileZip({
      'p/main.tex': text('\\documentclass{article}\n\\begin{document}\n\\input{intro.tex}\n\\end{document}\n'),
      'p/intro.tex': new Uint8Array([0x41, 0x00, 0x42]),
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'compilation_failed');
  });
});
