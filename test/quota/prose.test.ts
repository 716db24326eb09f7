// Plan prose is generated from the plan table (issue #14): the words say what the table says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLANS } from '../../src/quota/plans.js';
import { anonymousLinkPhrase, anonymousTierPhrase, freeKeyPhrase, paidPlansPhrase } from '../../src/quota/prose.js';

test('the phrases read the plan table', () => {
  assert.equal(paidPlansPhrase(), 'Starter or above');
  assert.equal(anonymousTierPhrase(), `pdflatex, ${PLANS.anonymous.maxPages} pages, ${PLANS.anonymous.compilesPerPeriod} per day`);
  assert.equal(anonymousTierPhrase(), 'pdflatex, 3 pages, 3 per day');
  assert.equal(anonymousLinkPhrase(), '1 hour');
  assert.equal(freeKeyPhrase(), 'A free API key gives 50 compilations a month, 5 pages, xelatex and assets.');
});
