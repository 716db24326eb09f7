// The service layer, assembled once. HTTP routes, MCP tools and the CLI all call into it.
import { join } from 'node:path';
import type { Logger } from 'pino';
import pino from 'pino';
import { AccountService } from './accounts/accounts.js';
import { UsageService } from './accounts/usage.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { Metrics } from './metrics.js';
import { SqlCounters, type Counters } from './quota/counters.js';
import { LocalBlobStore, type BlobStore } from './storage/blobs.js';
import { migrate, openDb, type Db } from './storage/db.js';
import { probeEngines, type EngineReport } from './tex/engines.js';

export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  db: Db;
  blobs: BlobStore;
  counters: Counters;
  metrics: Metrics;
  engines: EngineReport;
  accounts: AccountService;
  usage: UsageService;
  /** Stops background work and closes connections. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** Replace parts (a failing store, a fake engine report) in tests. */
  overrides?: Partial<Pick<Services, 'blobs' | 'counters' | 'engines'>>;
}

export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? pino({ level: config.logLevel });
  const db = await openDb(config.databaseUrl);
  await migrate(db);

  const blobs = options.overrides?.blobs ?? new LocalBlobStore(join(config.dataDir, 'blobs'));
  const counters = options.overrides?.counters ?? new SqlCounters(db.kysely);
  // In the embedded default no other node can hold a reservation, so any left are from a crash.
  if (db.dialect === 'sqlite') await counters.clearReservations();
  const engines = options.overrides?.engines ?? (await probeEngines());
  const accounts = new AccountService(db.kysely, clock, config.keyPrefix);
  const usage = new UsageService(db.kysely, counters, clock);
  const cleanups: Array<() => Promise<void> | void> = [];

  return {
    config,
    clock,
    log,
    db,
    blobs,
    counters,
    metrics: new Metrics(),
    engines,
    accounts,
    usage,
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
      await db.close();
    },
  };
}
