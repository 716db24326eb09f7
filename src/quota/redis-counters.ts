// Counters in Redis, for API nodes that share quota without sharing a database round-trip.
// Each check-and-take runs as one Lua script, so it is atomic across nodes. A reservation is a
// lease in a sorted set, scored by when it ends: the node's heartbeat pushes the end of its own
// live leases forward, so a killed node's slots come back within a lease length; a hash per
// node name lists its leases, so a restarted node ends its killed predecessor's at once.
// While Redis is down, every call fails within about a second with redis_unavailable (503,
// retryable) rather than waiting, and the client reconnects by itself.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { systemClock } from '../clock.js';
import { redisFault, unavailable } from '../storage/faults.js';
import { leaseOwner, RESERVATION_LEASE_MS, type CounterState, type Counters, type LeaseOwner } from './counters.js';

export { RESERVATION_LEASE_MS };

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

// KEYS: used, leases, done-marker of the lease. ARGV: 1 to count the work, 0 to give the slot
// back; the lease id, or '' for the lease that ends first; the marker's lifetime in ms.
// A named lease is finished at most once: ioredis resends a command whose reply was lost to a
// dropped connection, and a resent commit must not count the work twice.
const FINISH = `
if ARGV[2] == '' then
  redis.call('ZPOPMIN', KEYS[2], 1)
else
  if not redis.call('SET', KEYS[3], 1, 'NX', 'PX', ARGV[3]) then return 0 end
  redis.call('ZREM', KEYS[2], ARGV[2])
end
if ARGV[1] == '1' then redis.call('INCR', KEYS[1]) end
return 1
`;

// KEYS: used. ARGV: amount, counter expiry ms.
const ADD = `
local created = redis.call('EXISTS', KEYS[1]) == 0
redis.call('INCRBY', KEYS[1], ARGV[1])
if created then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return 1
`;

/** Connection settings that make a lost Redis fail requests fast instead of holding them. */
export const REDIS_OPTIONS = {
  // A command waits for at most one reconnection attempt, then fails.
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 3000,
  // Reconnect forever, at most a second apart, so the node recovers by itself.
  retryStrategy: (times: number) => Math.min(times * 100, 1000),
} as const;

export interface LeaseOptions {
  leaseMs?: number;
  owner?: LeaseOwner;
}

export class RedisCounters implements Counters {
  /** This instance's live leases (lease id → counter key): what its heartbeat renews. */
  private readonly live = new Map<string, string>();
  private readonly leaseMs: number;
  private readonly owner: LeaseOwner;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'quire:',
    private readonly now: () => number = systemClock.ms,
    options: LeaseOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? RESERVATION_LEASE_MS;
    this.owner = options.owner ?? leaseOwner();
  }

  /** `onError` sees connection errors (without a listener ioredis prints them to stderr). */
  static connect(url: string, prefix: string, onError: (err: Error) => void = () => {}, options: LeaseOptions = {}): RedisCounters {
    const redis = new Redis(url, REDIS_OPTIONS);
    const counters = new RedisCounters(redis, prefix, systemClock.ms, options);
    redis.on('error', (err: Error) => {
      counters.lastError = err;
      onError(err);
    });
    redis.on('ready', () => (counters.lastError = null));
    return counters;
  }

  /** The last connection error, which says more than "retries exhausted" in /health. */
  private lastError: Error | null = null;

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw redisFault(err) ?? err;
    }
  }

  async ping(): Promise<void> {
    try {
      await this.redis.ping();
    } catch (err) {
      throw unavailable('redis', this.lastError ?? err);
    }
  }

  private keys(key: string): [string, string] {
    return [`${this.prefix}${key}:used`, `${this.prefix}${key}:leases`];
  }

  async get(key: string): Promise<CounterState> {
    const [usedKey, leasesKey] = this.keys(key);
    const [used, reserved] = await this.call(() =>
      Promise.all([this.redis.get(usedKey), this.redis.zcount(leasesKey, `(${this.now()}`, '+inf')]),
    );
    return { used: Number(used ?? 0), reserved };
  }

  async tryReserve(key: string, limit: number, expiresAt: Date) {
    const now = this.now();
    const lease = randomUUID();
    const [ok, used, reserved] = (await this.call(() =>
      this.redis.eval(
        RESERVE,
        2,
        ...this.keys(key),
        limit,
        now,
        now + this.leaseMs,
        lease,
        Math.max(expiresAt.getTime(), now + this.leaseMs),
      ),
    )) as [number, number, number];
    if (ok === 1) {
      this.live.set(lease, key);
      await this.call(() => this.redis.hset(this.nodeKey(), lease, `${this.owner.instance}|${key}`));
    }
    return ok === 1 ? { ok: true, used: Number(used), reserved: Number(reserved), lease } : { ok: false, used: Number(used), reserved: Number(reserved) };
  }

  async commit(key: string, lease?: string): Promise<void> {
    await this.finish(key, '1', lease);
  }

  async release(key: string, lease?: string): Promise<void> {
    await this.finish(key, '0', lease);
  }

  private async finish(key: string, count: '1' | '0', lease = ''): Promise<void> {
    const done = `${this.prefix}lease-done:${lease || 'none'}`;
    await this.call(() => this.redis.eval(FINISH, 3, ...this.keys(key), done, count, lease, RESERVATION_LEASE_MS));
    if (lease === '') return;
    this.live.delete(lease);
    await this.call(() => this.redis.hdel(this.nodeKey(), lease));
  }

  private nodeKey(): string {
    return `${this.prefix}node-leases:${this.owner.node}`;
  }

  async add(key: string, amount: number, expiresAt: Date): Promise<void> {
    await this.call(() => this.redis.eval(ADD, 1, this.keys(key)[0], amount, expiresAt.getTime()));
  }

  async heartbeat(): Promise<void> {
    if (this.live.size === 0) return;
    const end = this.now() + this.leaseMs;
    const batch = this.redis.multi();
    // XX: a lease that already ended (or was finished) is not brought back.
    for (const [lease, key] of this.live) batch.zadd(this.keys(key)[1], 'XX', end, lease);
    await this.call(() => batch.exec());
  }

  async endPreviousInstance(): Promise<void> {
    const held = await this.call(() => this.redis.hgetall(this.nodeKey()));
    for (const [lease, owner] of Object.entries(held)) {
      const [instance, ...rest] = owner.split('|');
      if (instance === this.owner.instance) continue;
      await this.call(() => this.redis.multi().zrem(this.keys(rest.join('|'))[1], lease).hdel(this.nodeKey(), lease).exec());
    }
  }

  /** Leases end on their own; other nodes may hold live ones, so nothing is cleared here. */
  async clearReservations(): Promise<void> {}

  /** Redis expires the keys itself. */
  async sweep(): Promise<void> {}

  async close(): Promise<void> {
    // quit() waits for a reply that never comes while Redis is down.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
