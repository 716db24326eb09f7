// Row types of every table. Times are ISO-8601 strings in UTC on both databases.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  plan: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  key_hash: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface TemplatesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  name_lower: string;
  /** 'raw' (V1) or 'liquid' (V2). */
  kind: string;
  description: string;
  latex_content: string;
  instructions: string | null;
  version: number;
  schema_json: string | null;
  sample_data_json: string | null;
  /** The TeX Live year renders use unless the request names one (0006); null: the server's default. */
  texlive: string | null;
  created_at: string;
  updated_at: string;
}

/** One kept version of a template: what was saved, never changed afterwards. */
export interface TemplateVersionsTable {
  template_id: number;
  account_id: number;
  version: number;
  /** The template's kind when the version was saved: 'raw' or 'liquid'. */
  kind: string;
  latex_content: string;
  instructions: string | null;
  schema_json: string | null;
  sample_data_json: string | null;
  created_at: string;
}

export interface AssetsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  name_lower: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  updated_at: string;
}

export interface PdfsTable {
  id: string;
  account_id: number | null;
  size_bytes: number;
  pages: number;
  created_at: string;
  expires_at: string;
}

export interface CountersTable {
  key: string;
  used: number;
  /** Unused since 0002: the live rows of counter_leases are the reservations. */
  reserved: number;
  expires_at: string;
}

export interface CounterLeasesTable {
  id: string;
  key: string;
  expires_at: string;
  /** The holding node's name and instance id (0004); null on leases from before. */
  node: string | null;
  instance: string | null;
}

export interface PreviewAttemptsTable {
  id: Generated<number>;
  account_id: number;
  created_at: string;
}

export interface JobsTable {
  id: string;
  account_id: number;
  /** compile | render | public_render | render_batch */
  kind: string;
  /** queued | running | succeeded | failed */
  status: string;
  /** The HTTP status of the stored body (200, or the error's status). */
  http_status: number | null;
  /** The exact body the synchronous call would have sent. */
  body_json: string | null;
  callback_url: string | null;
  /** none | pending | delivered | failed */
  webhook_state: string;
  webhook_attempts_json: string;
  webhook_next_at: string | null;
  /** The process running the job, and when it last said so (a stale heartbeat means it died). */
  runner_id: string | null;
  heartbeat_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** Hash of the door, route and canonical body. */
  fingerprint: string;
  /** in_progress | done */
  state: string;
  status: number | null;
  body: string | null;
  content_type: string | null;
  created_at: string;
  expires_at: string;
}

export interface WebhookSecretsTable {
  account_id: number;
  secret: string;
  created_at: string;
}

/** A stored signing identity (0007): `sealed` is the PKCS#12 and its password, AES-256-GCM (src/signing/seal.ts). */
export interface SigningIdentitiesTable {
  account_id: number;
  name: string;
  name_lower: string;
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
  key_type: string;
  sealed: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  assets: AssetsTable;
  pdfs: PdfsTable;
  counters: CountersTable;
  counter_leases: CounterLeasesTable;
  preview_attempts: PreviewAttemptsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_secrets: WebhookSecretsTable;
  signing_identities: SigningIdentitiesTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type TemplateVersionRow = Selectable<TemplateVersionsTable>;
export type NewTemplateRow = Insertable<TemplatesTable>;
export type AssetRow = Selectable<AssetsTable>;
export type PdfRow = Selectable<PdfsTable>;
export type JobRow = Selectable<JobsTable>;
