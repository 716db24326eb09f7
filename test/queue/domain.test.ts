// The domain adapter: the TeX layer's own errors become catalogue errors, for TeX jobs and
// merges alike; anything else passes through untouched.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { domainQueue } from '../../src/queue/domain.js';
import type { TexQueue } from '../../src/queue/queue.js';
import { JobFileNameError, QueueFullError } from '../../src/tex/errors.js';

function failing(err: Error): TexQueue {
  return {
    run: async () => Promise.reject(err),
    merge: async () => Promise.reject(err),
    stats: () => ({ running: 3, waiting: 1 }),
    close: async () => {},
  };
}

describe('domain queue', () => {
  test('a full queue is 503 server_busy with Retry-After, from run and merge', async () => {
    const queue = domainQueue(failing(new QueueFullError(7)));
    for (const work of [queue.run({ source: 'x', compiler: 'pdflatex', timeoutMs: 1, maxFileBytes: 1 }), queue.merge({ pdfs: [], maxBytes: 1 })]) {
      await assert.rejects(work, (err: unknown) => {
        assert.ok(err instanceof ServiceError);
        assert.equal(err.code, 'server_busy');
        assert.equal(err.status, 503);
        assert.equal(err.details.retry_after_seconds, 7);
        assert.equal(err.headers['retry-after'], '7');
        return true;
      });
    }
  });

  test('a reserved file name is 422 invalid_asset_filename naming the file', async () => {
    const queue = domainQueue(failing(new JobFileNameError('main.aux')));
    await assert.rejects(queue.run({ source: 'x', compiler: 'pdflatex', timeoutMs: 1, maxFileBytes: 1 }), (err: unknown) => {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.code, 'invalid_asset_filename');
      assert.equal(err.status, 422);
      assert.deepEqual(err.details, { name: 'main.aux' });
      return true;
    });
  });

  test('other errors pass through; stats come from the queue; ping and start only when it has them', async () => {
    const boom = new Error('boom');
    const queue = domainQueue(failing(boom));
    await assert.rejects(queue.merge({ pdfs: [], maxBytes: 1 }), (err: unknown) => err === boom);
    assert.deepEqual(queue.stats(), { running: 3, waiting: 1 });
    assert.equal(queue.ping, undefined);
    assert.equal(queue.start, undefined);
  });
});
