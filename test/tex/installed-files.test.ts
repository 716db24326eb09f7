// Validate's kpsewhich answers are kept (tex/lint/loads.ts): each kpsewhich is a process the
// service forks, holding its event loop. kpsewhich exits with the count of names it did not
// find, so an answer with two missing names (exit 2) must be kept as well as one with one
// missing (exit 1): before, only exit 1 was, and every validate of such a source forked again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { installedFiles, knownFile } from '../../src/tex/lint/loads.js';

test('kpsewhich answers are kept whatever number of names it did not find', async () => {
  const missing = ['quire-absent-one.tex', 'quire-absent-two.tex', 'quire-absent-three.sty'];
  const found = await installedFiles([...missing, 'article.cls']);
  assert.deepEqual([...found], ['article.cls']);
  for (const name of missing) assert.equal(knownFile(name), false, name);
  assert.equal(knownFile('article.cls'), true);
  // Answered from memory: the same set again.
  assert.deepEqual([...(await installedFiles([...missing, 'article.cls']))], ['article.cls']);
});
