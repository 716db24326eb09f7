// Counters in Redis, for API nodes that share quota without sharing a database round-trip.
// Each check-and-take runs as one Lua script, so it is atomic across nodes. A reservation is a
// lease in a sorted set: if a node dies mid-compile its slot comes back when the lease ends,
// instead of staying taken until the counter expires.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CounterState, Counters } from './counters.js';

/** Longer than any compile can hold a slot (the largest plan timeout plus queueing). */
export const RESERVATION_LEASE_MS = 15 * 60 * 1000;

// KEYS: used, leases. ARGV: limit, now ms, lease end ms, lease id, counter expiry ms.
const RESERVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local reserved = redis.call('ZCARD', KEYS[2])
if used + reserved >= tonumber(ARGV[1]) then return {0, used, reserved} end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
-- The count lives as long as its period; INCR later keeps this expiry.
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], 0, 'PXAT', ARGV[5]) end
return {1, used, reserved + 1}
`;

// KEYS: used, leases. ARGV: 1 to count the work, 0 to give the slot back.
const FINISH = `
redis.call('ZPOPMIN', KEYS[2], 1)
if ARGV[1] == '1' then redis.call('INCR', KEYS[1]) end
return 1
`;

export class RedisCounters implements Counters {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'quire:',
    private readonly now: () => number = Date.now,
  ) {}

  static connect(url: string, prefix: string): RedisCounters {
    return new RedisCounters(new Redis(url, { maxRetriesPerRequest: 2 }), prefix);
  }

  private keys(key: string): [string, string] {
    return [`${this.prefix}${key}:used`, `${this.prefix}${key}:leases`];
  }

  async get(key: string): Promise<CounterState> {
    const [usedKey, leasesKey] = this.keys(key);
    const [used, reserved] = await Promise.all([
      this.redis.get(usedKey),
      this.redis.zcount(leasesKey, `(${this.now()}`, '+inf'),
    ]);
    return { used: Number(used ?? 0), reserved };
  }

  async tryReserve(key: string, limit: number, expiresAt: Date) {
    const now = this.now();
    const [ok, used, reserved] = (await this.redis.eval(
      RESERVE,
      2,
      ...this.keys(key),
      limit,
      now,
      now + RESERVATION_LEASE_MS,
      randomUUID(),
      Math.max(expiresAt.getTime(), now + RESERVATION_LEASE_MS),
    )) as [number, number, number];
    return { ok: ok === 1, used: Number(used), reserved: Number(reserved) };
  }

  async commit(key: string): Promise<void> {
    await this.redis.eval(FINISH, 2, ...this.keys(key), '1');
  }

  async release(key: string): Promise<void> {
    await this.redis.eval(FINISH, 2, ...this.keys(key), '0');
  }

  /** Leases end on their own; other nodes may hold live ones, so nothing is cleared here. */
  async clearReservations(): Promise<void> {}

  /** Redis expires the keys itself. */
  async sweep(): Promise<void> {}

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
