// Reading and restoring kept template versions (docs/api.md, "Template versions"): the service
// behind GET /api/v2/templates/{id}/versions[/{n}], POST …/restore and the MCP version tools.
import type { Static } from '@sinclair/typebox';
import type { Caller } from '../accounts/caller.js';
import { limitsOf, isPlanName } from '../quota/plans.js';
import type { TemplateRow, TemplateVersionRow } from '../storage/schema.js';
import { checkFields } from './fields.js';
import { v1View } from './rows.js';
import type { TemplateService } from './service.js';
import type { TemplateVersion, TemplateVersionRow as VersionRowBody } from './version-schemas.js';

function ref(row: TemplateRow) {
  return { id: Number(row.id), name: row.name, version: Number(row.version) };
}

function rowView(v: TemplateVersionRow, latest: number): Static<typeof VersionRowBody> {
  return {
    version: Number(v.version),
    placeholder_engine: v.kind === 'liquid' ? 'liquid' : 'none',
    latex_size_bytes: Buffer.byteLength(v.latex_content),
    has_instructions: v.instructions !== null && v.instructions !== '',
    latest: Number(v.version) === latest,
    created_at: v.created_at,
  };
}

function detailView(v: TemplateVersionRow, latest: number): Static<typeof TemplateVersion> {
  const json = (text: string | null) => (text ? (JSON.parse(text) as Record<string, unknown>) : null);
  return {
    ...rowView(v, latest),
    latex_content: v.latex_content,
    instructions: v.instructions,
    schema: json(v.schema_json),
    sample_data: json(v.sample_data_json),
  };
}

export class TemplateVersionService {
  constructor(private readonly templates: TemplateService) {}

  async list(caller: Caller, idOrName: string) {
    const row = await this.templates.owned(caller, idOrName);
    const versions = await this.templates.rows.versions.list(row.id);
    const plan = caller.kind === 'account' && isPlanName(caller.account.plan) ? caller.account.plan : 'free';
    return { template: ref(row), kept_limit: limitsOf(plan).templateVersions, versions: versions.map((v) => rowView(v, Number(row.version))) };
  }

  async get(caller: Caller, idOrName: string, version: number) {
    const row = await this.templates.owned(caller, idOrName);
    const kept = await this.templates.rows.versions.kept(row, version);
    return { template: ref(row), version: detailView(kept, Number(row.version)) };
  }

  /** Makes the source and instructions of a kept version the new latest version. */
  async restore(caller: Caller, idOrName: string, version: number) {
    const row = await this.templates.owned(caller, idOrName);
    const kept = await this.templates.rows.versions.kept(row, version);
    if (caller.kind === 'account') checkFields(caller, {}, { field: 'latex_content', value: kept.latex_content });
    // The template keeps its kind: a placeholder template restored to the source of a version
    // saved before its promotion stays a placeholder template, so that source passes the policy
    // and gets a schema.
    const derived = row.kind === 'liquid' ? this.templates.derive(kept.latex_content) : null;
    const changes = { latex_content: kept.latex_content, instructions: kept.instructions, version: row.version + 1 };
    const updated = await this.templates.rows.update(row, changes, derived);
    return { template: v1View(updated), restored_from: version, ...(derived ?? {}) };
  }
}
