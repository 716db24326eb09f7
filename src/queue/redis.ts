// Redis for the BullMQ transport: connection options from the configured URL, and commands
// that fail fast while the connection is down instead of waiting for it to come back.
import { once } from 'node:events';
import type { Redis, RedisOptions } from 'ioredis';

const REDIS_TIMEOUT_MS = 3_000;

/** ioredis options from a redis:// or rediss:// URL, for connections BullMQ opens itself. */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1) || 0);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * A queue operation, failing at once while the connection is down (BullMQ would wait for
 * it to come back) and after REDIS_TIMEOUT_MS when Redis stops answering.
 */
export async function guarded<T>(connection: Redis, op: () => Promise<T>): Promise<T> {
  // Between reconnection attempts the outage is known: answer now. A connect in progress
  // (the node just started, or Redis just came back) gets the usual time to finish.
  if (['reconnecting', 'end', 'close'].includes(connection.status)) throw new Error(`Redis connection is ${connection.status}`);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      connection.status === 'ready' ? op() : once(connection, 'ready').then(op),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('Command timed out')), REDIS_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
