// asyncRequest: the one reading of `async` and `callback_url` for every door.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { asyncRequest } from '../../src/jobs/async-fields.js';

function refusal(fields: Record<string, unknown>, lead?: string): ServiceError {
  try {
    asyncRequest(fields, lead);
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('asyncRequest', () => {
  test('absent fields: answered now; async: true with a URL: a job with its callback', () => {
    assert.deepEqual(asyncRequest({}), { async: false, callbackUrl: undefined });
    assert.deepEqual(asyncRequest({ async: false }), { async: false, callbackUrl: undefined });
    assert.deepEqual(asyncRequest({ async: true, callback_url: 'https://x.test/h' }), { async: true, callbackUrl: 'https://x.test/h' });
  });

  test('a non-boolean async and a callback_url without async are validation_failed on the field', () => {
    const notBoolean = refusal({ async: 'yes' });
    assert.equal(notBoolean.code, 'validation_failed');
    assert.deepEqual(notBoolean.details.fields, [{ field: 'async', rule: 'type', message: 'must be boolean' }]);
    const orphan = refusal({ callback_url: 'https://x.test/h' }, 'Arguments are invalid');
    assert.deepEqual(orphan.details.fields, [{ field: 'callback_url', rule: 'dependencies', message: 'needs async: true' }]);
    assert.match(orphan.message, /^Arguments are invalid/);
  });
});
