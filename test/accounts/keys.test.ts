import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { displayPrefix, generateKey, hashKey, isWellFormedKey } from '../../src/accounts/keys.js';

test('a key is the prefix and 48 lowercase hex characters', () => {
  const key = generateKey('svc_');
  assert.match(key, /^svc_[0-9a-f]{48}$/);
  assert.notEqual(generateKey('svc_'), key, 'two keys differ');
  assert.equal(isWellFormedKey(key, 'svc_'), true);
  assert.equal(displayPrefix(key, 'svc_'), key.slice(0, 12));
});

test('only well-formed keys pass the format check', () => {
  const good = generateKey('svc_');
  for (const bad of [good.toUpperCase(), good.slice(0, -1), good + '0', 'svc_' + 'g'.repeat(48), 'key_' + good.slice(4), '']) {
    assert.equal(isWellFormedKey(bad, 'svc_'), false, bad);
  }
  fc.assert(
    fc.property(fc.string(), (s) => {
      if (isWellFormedKey(s, 'svc_')) assert.match(s, /^svc_[0-9a-f]{48}$/);
    }),
  );
});

test('a key is stored as its SHA-256', () => {
  const key = generateKey('svc_');
  assert.equal(hashKey(key), createHash('sha256').update(key).digest('hex'));
  assert.notEqual(hashKey(key), hashKey(generateKey('svc_')));
});
