// redisOptions: the connection BullMQ opens itself gets the same server, database,
// credentials and TLS as the configured URL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redisOptions } from '../../src/queue/redis.js';

describe('redisOptions', () => {
  test('host and default port; database 0 is left out', () => {
    assert.deepEqual(redisOptions('redis://127.0.0.1'), { host: '127.0.0.1', port: 6379 });
    assert.deepEqual(redisOptions('redis://cache:6380/0'), { host: 'cache', port: 6380 });
  });

  test('credentials are decoded, the database is numeric, rediss:// turns TLS on', () => {
    assert.deepEqual(redisOptions('rediss://us%40er:p%3Ass@cache.example:6390/3'), {
      host: 'cache.example',
      port: 6390,
      username: 'us@er',
      password: 'p:ss',
      db: 3,
      tls: {},
    });
  });
});
