// The one migration set, applied in order at start on SQLite and PostgreSQL alike.
// Add a file per change and list it here; never edit one that has shipped.
import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import * as foundation from './0001_foundation.js';
import * as counterLeases from './0002_counter_leases.js';
import * as asyncJobs from './0003_async_jobs.js';
import * as templateVersions from './0004_template_versions.js';
import * as leaseNodes from './0005_lease_nodes.js';
import * as templateTexlive from './0006_template_texlive.js';
import * as signingIdentities from './0007_signing_identities.js';

export interface Migration {
  name: string;
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  { name: '0001_foundation', up: foundation.up },
  { name: '0002_counter_leases', up: counterLeases.up },
  { name: '0003_async_jobs', up: asyncJobs.up },
  { name: '0004_template_versions', up: templateVersions.up },
  { name: '0005_lease_nodes', up: leaseNodes.up },
  { name: '0006_template_texlive', up: templateTexlive.up },
  { name: '0007_signing_identities', up: signingIdentities.up },
];
