// The SVG policy decodes CSS escapes wherever CSS appears (presentation attributes, `style`,
// `<style>`) before it looks for url() and @import: every escape form is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSvg, decodeCssEscapes } from '../../src/assets/svg.js';

const svg = (inner: string, attrs = '') => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"${attrs}>${inner}</svg>`);
// url( spelled with each escape form: hex, hex with its space, six hex digits, the letter escaped, upper-case hex.
const SPELLINGS = ['u\\72l(', 'u\\72 l(', 'u\\000072l(', 'u\\rl(', '\\55 RL(', 'U\\52\\4c('];

test('decodeCssEscapes reads escapes as CSS does', () => {
  assert.equal(decodeCssEscapes('u\\72l('), 'url(');
  assert.equal(decodeCssEscapes('u\\000072 l('), 'url(');
  assert.equal(decodeCssEscapes('\\@import'), '@import');
  assert.equal(decodeCssEscapes('a\\\nb'), 'ab');
  assert.equal(decodeCssEscapes('\\0 x'), '\uFFFDx');
});

for (const spelled of SPELLINGS) {
  test(`a presentation attribute with ${spelled} is refused`, () => {
    const check = checkSvg(svg(`<rect width="5" height="5" fill="${spelled}http://evil.example/x.svg#p)"/>`));
    assert.equal(check.ok, false);
    assert.match((check as { reason: string }).reason, /url\(\)/);
  });

  test(`a style attribute with ${spelled} is refused`, () => {
    const check = checkSvg(svg(`<rect width="5" height="5" style="fill: ${spelled}http://evil.example/x.svg#p)"/>`));
    assert.equal(check.ok, false);
  });

  test(`a <style> element with ${spelled} is refused`, () => {
    const check = checkSvg(svg(`<style>rect { fill: ${spelled}http://evil.example/x.svg#p) }</style><rect width="5" height="5"/>`));
    assert.equal(check.ok, false);
  });
}

test('an escaped url(#id) in an attribute stays allowed', () => {
  const check = checkSvg(svg('<defs><linearGradient id="g"/></defs><rect width="5" height="5" fill="u\\72l(#g)"/>'));
  assert.equal(check.ok, true);
});
