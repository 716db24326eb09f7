// Saved templates: V1 raw LaTeX and V2 Liquid placeholder templates, the kind transitions of
// SPEC §3, and render. Every check runs before anything is written, so a refused save or
// promote leaves the stored template exactly as it was.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { lockAccount, type Db } from '../storage/db.js';
import { requirePaidPlan, type AccountCaller, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { CompileContext } from '../compile/types.js';
import type { Config } from '../config.js';
import { errors, ServiceError, type FieldError, validationFailed, invalidField } from '../errors.js';
import { links } from '../links.js';
import type { Counters } from '../quota/counters.js';
import { renderMinuteKey } from '../quota/keys.js';
import { reserveOrRefuse } from '../quota/reserve.js';
import {
  limitsOf,
  RENDER_WALL_CLOCK_SECONDS,
  TEMPLATE_DESCRIPTION_MAX,
  TEMPLATE_INSTRUCTIONS_MAX,
  TEMPLATE_NAME_MAX,
} from '../quota/plans.js';
import type { Database, TemplateRow, TemplateVersionRow } from '../storage/schema.js';
import { hasLiquidMarkup } from './braces.js';
import { checkDataSize } from './data-size.js';
import { checkTemplate } from './liquid.js';
import { deriveSchema, type JsonSchema } from './schema.js';
import type { CreateV2Input, PatchV2Input, PromoteInput, SaveTemplateInput, TemplateListRow, TemplateV1, TemplateV2 } from './schemas.js';
import { RenderPipeline, type RenderCompiler, type TemplateKind } from './pipeline.js';
import { validateData } from './validate.js';
import { TemplateVersionStore } from './versions.js';

export interface AssetNames {
  /** Names in the caller's asset library. */
  names(caller: Caller): Promise<string[]>;
}

interface Derived {
  schema: JsonSchema;
  sample_data: Record<string, unknown>;
}

type Engine = 'none' | 'liquid';

function engineOf(row: TemplateRow): Engine {
  return row.kind === 'liquid' ? 'liquid' : 'none';
}

function common(row: TemplateRow) {
  return {
    id: Number(row.id),
    name: row.name,
    description: row.description,
    placeholder_engine: engineOf(row),
    version: Number(row.version),
    latex_size_bytes: Buffer.byteLength(row.latex_content),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function derivedOf(row: TemplateRow): Derived {
  return {
    schema: row.schema_json ? (JSON.parse(row.schema_json) as JsonSchema) : {},
    sample_data: row.sample_data_json ? (JSON.parse(row.sample_data_json) as Record<string, unknown>) : {},
  };
}

export function v1View(row: TemplateRow): Static<typeof TemplateV1> {
  return { ...common(row), latex_content: row.latex_content, instructions: row.instructions };
}

export function listRow(row: TemplateRow): Static<typeof TemplateListRow> {
  return { ...common(row), has_instructions: row.instructions !== null && row.instructions !== '' };
}

export function v2View(row: TemplateRow): Static<typeof TemplateV2> {
  return { ...common(row), latex_with_placeholders: row.latex_content, instructions: row.instructions, ...derivedOf(row) };
}

const isNumericId = (value: string) => /^[0-9]{1,15}$/.test(value);

export class TemplateService {
  private readonly pipeline: RenderPipeline;
  /** Every saved source of a template (versions.ts). */
  readonly versions: TemplateVersionStore;

  /** Wall clock of one render call; tests shorten it. */
  get renderWallClockMs(): number {
    return this.pipeline.wallClockMs;
  }
  set renderWallClockMs(ms: number) {
    this.pipeline.wallClockMs = ms;
  }

  private get db(): Kysely<Database> {
    return this.store.kysely;
  }

  constructor(
    private readonly store: Db,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly counters: Counters,
    compiler: RenderCompiler,
    private readonly assets: AssetNames,
  ) {
    this.versions = new TemplateVersionStore(store);
    this.pipeline = new RenderPipeline(clock, compiler, SAVED_TEMPLATE, RENDER_WALL_CLOCK_SECONDS * 1000);
  }

  // ---- shared checks -------------------------------------------------------------------

  private owner(caller: Caller): AccountCaller {
    return requirePaidPlan(caller, 'Saved templates and render', links(this.config).upgradeUrl);
  }


  private checkFields(
    caller: AccountCaller,
    input: { name?: unknown; description?: unknown; instructions?: unknown },
    source: { field: string; value: unknown } | null,
  ): void {
    const fields: FieldError[] = [];
    const text = (field: string, value: unknown, max: number, opts: { nullable?: boolean; min?: number } = {}) => {
      if (value === undefined || (value === null && opts.nullable)) return;
      if (typeof value !== 'string') {
        fields.push({ field, rule: 'type', message: opts.nullable ? 'must be string or null' : 'must be string' });
      } else if (value.length > max) {
        fields.push({ field, rule: 'maxLength', limit: max, message: `must NOT have more than ${max} characters` });
      } else if (opts.min && value.trim().length < opts.min) {
        fields.push({ field, rule: 'minLength', limit: opts.min, message: `must NOT have fewer than ${opts.min} characters` });
      }
    };
    text('name', input.name, TEMPLATE_NAME_MAX, { min: 1 });
    text('description', input.description, TEMPLATE_DESCRIPTION_MAX);
    text('instructions', input.instructions, TEMPLATE_INSTRUCTIONS_MAX, { nullable: true });
    if (source && source.value !== undefined) {
      const plan = caller.account.plan;
      const max = limitsOf(plan).maxLatexBytes;
      if (typeof source.value !== 'string') {
        fields.push({ field: source.field, rule: 'type', message: 'must be string' });
      } else if (source.value.trim() === '') {
        fields.push({ field: source.field, rule: 'minLength', limit: 1, message: 'must not be empty' });
      } else if (Buffer.byteLength(source.value) > max) {
        fields.push({
          field: source.field,
          rule: 'maxBytes',
          limit: max,
          message: `must not be larger than ${max} bytes (the ${plan} plan's LaTeX source limit)`,
        });
      }
    }
    if (fields.length) {
      throw validationFailed(fields);
    }
  }

  private missing(field: string): ServiceError {
    return invalidField(field, 'required', `must have required property '${field}'`, { message: `Request is invalid: ${field} is required` });
  }

  /** Security policy, Liquid parse and schema derivation of a placeholder source. */
  private derive(source: string): Derived {
    checkTemplate(source);
    return deriveSchema(source);
  }

  private async find(accountId: number, idOrName: string): Promise<TemplateRow | undefined> {
    const query = this.db.selectFrom('templates').selectAll().where('account_id', '=', accountId);
    if (isNumericId(idOrName)) {
      const byId = await query.where('id', '=', Number(idOrName)).executeTakeFirst();
      if (byId) return byId;
    }
    return query.where('name_lower', '=', idOrName.toLowerCase()).executeTakeFirst();
  }

  private async get(accountId: number, idOrName: string): Promise<TemplateRow> {
    const row = await this.find(accountId, idOrName);
    if (!row) {
      throw errors.template_not_found(`No template "${idOrName}" in this account.`, { id: idOrName });
    }
    return row;
  }

  private async checkCount(trx: Kysely<Database>, caller: AccountCaller): Promise<void> {
    const plan = caller.account.plan;
    const limit = limitsOf(plan).templates;
    if (limit === null) return;
    const row = await trx
      .selectFrom('templates')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', caller.account.id)
      .executeTakeFirst();
    const count = Number(row?.count ?? 0);
    if (count >= limit) {
      throw errors.template_limit_reached(`The ${plan} plan stores up to ${limit} templates and this account has ${count}. Delete one or upgrade.`,
        { limit, count, plan, upgrade_url: links(this.config).upgradeUrl },
      );
    }
  }

  /** Inserts a new template unless the plan's count is reached, as one step per account. */
  private async insertCounted(owner: AccountCaller, values: Parameters<TemplateService['insert']>[1]): Promise<TemplateRow> {
    return this.db.transaction().execute(async (trx) => {
      await lockAccount(this.store, trx, owner.account.id);
      await this.checkCount(trx, owner);
      return this.insert(trx, values);
    });
  }

  private async insert(trx: Kysely<Database>, values: {
    account_id: number;
    name: string;
    kind: 'raw' | 'liquid';
    description: string;
    latex_content: string;
    instructions: string | null;
    derived: Derived | null;
  }): Promise<TemplateRow> {
    const now = this.clock.now().toISOString();
    let row: TemplateRow;
    try {
      row = await trx
        .insertInto('templates')
        .values({
          account_id: values.account_id,
          name: values.name,
          name_lower: values.name.toLowerCase(),
          kind: values.kind,
          description: values.description,
          latex_content: values.latex_content,
          instructions: values.instructions,
          version: 1,
          schema_json: values.derived ? JSON.stringify(values.derived.schema) : null,
          sample_data_json: values.derived ? JSON.stringify(values.derived.sample_data) : null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (err) {
      if (/unique|duplicate/i.test(String((err as Error).message))) throw this.nameTaken(values.name);
      throw err;
    }
    await this.versions.record(trx, row, now);
    return row;
  }

  private nameTaken(name: string): ServiceError {
    return errors.name_taken(`A template named "${name}" already exists in this account (names are case-insensitive).`, {
      name,
    });
  }

  /** Writes the changes; a new `version` is kept as a version (versions.ts) in the same step. */
  private async update(row: TemplateRow, changes: Partial<TemplateRow>, derived?: Derived | null): Promise<TemplateRow> {
    const now = this.clock.now().toISOString();
    const set: Record<string, unknown> = { ...changes, updated_at: now };
    if (derived) {
      set.schema_json = JSON.stringify(derived.schema);
      set.sample_data_json = JSON.stringify(derived.sample_data);
    }
    if (typeof changes.name === 'string') set.name_lower = changes.name.toLowerCase();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const updated = await trx.updateTable('templates').set(set).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
        if (updated.version !== row.version) await this.versions.record(trx, updated, now);
        else if (derived) await this.versions.rederive(trx, updated);
        return updated;
      });
    } catch (err) {
      if (/unique|duplicate/i.test(String((err as Error).message))) throw this.nameTaken(String(changes.name));
      throw err;
    }
  }

  // ---- V1 --------------------------------------------------------------------------------

  async saveV1(caller: Caller, input: SaveTemplateInput) {
    const owner = this.owner(caller);
    if (input.name === undefined) throw this.missing('name');
    this.checkFields(owner, input, { field: 'latex_content', value: input.latex_content });
    const engine = input.placeholder_engine;
    if (engine !== undefined && engine !== 'liquid' && engine !== 'none') {
      throw errors.invalid_placeholder_engine(`placeholder_engine must be "liquid" or "none" (or omitted to keep the current kind), got ${JSON.stringify(engine)}.`,
        { allowed: ['liquid', 'none'] },
      );
    }
    const existing = await this.find(owner.account.id, input.name);
    const source = input.latex_content;

    if (!existing) {
      if (source === undefined) throw this.missing('latex_content');
      const kind = engine === 'liquid' ? 'liquid' : 'raw';
      if (engine === undefined && hasLiquidMarkup(source)) throw placeholdersInV1();
      const derived = kind === 'liquid' ? this.derive(source) : null;
      const row = await this.insertCounted(owner, {
        account_id: owner.account.id,
        name: input.name,
        kind,
        description: input.description ?? '',
        latex_content: source,
        instructions: input.instructions ?? null,
        derived,
      });
      return { template: v1View(row), created: true, ...(derived ?? {}) };
    }

    const changes: Partial<TemplateRow> = {};
    if (input.description !== undefined) changes.description = input.description;
    if (input.instructions !== undefined) changes.instructions = input.instructions;
    const sourceChanged = source !== undefined && source !== existing.latex_content;
    if (source !== undefined) changes.latex_content = source;

    if (existing.kind === 'liquid') {
      if (engine === 'none') {
        throw errors.engine_downgrade_not_supported(`"${existing.name}" is a placeholder (Liquid) template and cannot be turned back into raw LaTeX. Save the raw source under a new name instead.`,
          { template_id: existing.id },
        );
      }
      const derived = sourceChanged ? this.derive(source) : null;
      if (sourceChanged) changes.version = existing.version + 1;
      const row = await this.update(existing, changes, derived);
      return { template: v1View(row), created: false, ...derivedOf(row) };
    }

    if (engine === 'liquid') {
      const promoted = source ?? existing.latex_content;
      const derived = this.derive(promoted);
      changes.kind = 'liquid';
      if (sourceChanged) changes.version = existing.version + 1;
      const row = await this.update(existing, changes, derived);
      return { template: v1View(row), created: false, promoted: true as const, ...derived };
    }
    if (engine === undefined && source !== undefined && hasLiquidMarkup(source)) throw placeholdersInV1();
    if (sourceChanged) changes.version = existing.version + 1;
    const row = await this.update(existing, changes);
    return { template: v1View(row), created: false };
  }

  /** The caller's template, after the plan check: what version reads start from. */
  async owned(caller: Caller, idOrName: string): Promise<TemplateRow> {
    return this.get(this.owner(caller).account.id, idOrName);
  }

  /** Makes the content of a kept version the new latest version (docs/api.md, "Template versions"). */
  async restore(caller: Caller, idOrName: string, version: number) {
    const owner = this.owner(caller);
    const row = await this.get(owner.account.id, idOrName);
    const kept = await this.keptVersion(row, version);
    this.checkFields(owner, {}, { field: 'latex_content', value: kept.latex_content });
    // The template keeps its kind: a placeholder template restored to a raw version's source
    // stays a placeholder template, so that source passes the policy and gets a schema.
    const derived = row.kind === 'liquid' ? this.derive(kept.latex_content) : null;
    const changes: Partial<TemplateRow> = { latex_content: kept.latex_content, instructions: kept.instructions, version: row.version + 1 };
    const updated = await this.update(row, changes, derived);
    return { template: v1View(updated), restored_from: version, ...(derived ?? {}) };
  }

  /** Version `version` of the template, or template_version_not_found with the versions kept. */
  async keptVersion(row: TemplateRow, version: number): Promise<TemplateVersionRow> {
    const kept = await this.versions.get(row.id, version);
    if (kept) return kept;
    const versions = (await this.versions.list(row.id)).map((v) => Number(v.version));
    throw errors.template_version_not_found(`Template "${row.name}" has no version ${version}; kept: ${versions.join(', ')}.`, {
      id: String(row.id),
      version,
      kept_versions: versions,
    });
  }

  async list(caller: Caller, kind?: 'liquid') {
    const owner = this.owner(caller);
    let query = this.db.selectFrom('templates').selectAll().where('account_id', '=', owner.account.id);
    if (kind) query = query.where('kind', '=', kind);
    const rows = await query.orderBy('name_lower').execute();
    return { templates: rows.map(listRow) };
  }

  async getV1(caller: Caller, idOrName: string) {
    const owner = this.owner(caller);
    return { template: v1View(await this.get(owner.account.id, idOrName)) };
  }

  async delete(caller: Caller, idOrName: string): Promise<void> {
    const owner = this.owner(caller);
    const row = await this.get(owner.account.id, idOrName);
    await this.db.deleteFrom('templates').where('id', '=', row.id).execute();
  }

  // ---- V2 --------------------------------------------------------------------------------

  private v2Body(row: TemplateRow) {
    const template = v2View(row);
    return { template, schema: template.schema, sample_data: template.sample_data };
  }

  private async getV2Row(owner: AccountCaller, idOrName: string): Promise<TemplateRow> {
    const row = await this.get(owner.account.id, idOrName);
    if (row.kind !== 'liquid') throw engineMismatch(row);
    return row;
  }

  async createV2(caller: Caller, input: CreateV2Input) {
    const owner = this.owner(caller);
    if (input.name === undefined) throw this.missing('name');
    if (input.latex_with_placeholders === undefined) throw this.missing('latex_with_placeholders');
    this.checkFields(owner, input, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    if (await this.find(owner.account.id, input.name)) throw this.nameTaken(input.name);
    const derived = this.derive(input.latex_with_placeholders);
    const row = await this.insertCounted(owner, {
      account_id: owner.account.id,
      name: input.name,
      kind: 'liquid',
      description: input.description ?? '',
      latex_content: input.latex_with_placeholders,
      instructions: input.instructions ?? null,
      derived,
    });
    return this.v2Body(row);
  }

  async getV2(caller: Caller, idOrName: string) {
    const owner = this.owner(caller);
    return this.v2Body(await this.getV2Row(owner, idOrName));
  }

  async patchV2(caller: Caller, idOrName: string, input: PatchV2Input) {
    const owner = this.owner(caller);
    this.checkFields(owner, input, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    const row = await this.getV2Row(owner, idOrName);
    const changes: Partial<TemplateRow> = {};
    if (input.name !== undefined && input.name !== row.name) {
      const clash = await this.find(owner.account.id, input.name);
      if (clash && clash.id !== row.id) throw this.nameTaken(input.name);
      changes.name = input.name;
    }
    if (input.description !== undefined) changes.description = input.description;
    if (input.instructions !== undefined) changes.instructions = input.instructions;
    let derived: Derived | null = null;
    const source = input.latex_with_placeholders;
    if (source !== undefined && source !== row.latex_content) {
      derived = this.derive(source);
      changes.latex_content = source;
      changes.version = row.version + 1;
    }
    return this.v2Body(await this.update(row, changes, derived));
  }

  async promote(caller: Caller, idOrName: string, body: unknown = {}) {
    const owner = this.owner(caller);
    const input = promoteInput(body);
    this.checkFields(owner, {}, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    const row = await this.get(owner.account.id, idOrName);
    if (row.kind === 'liquid') {
      throw errors.already_v2(`"${row.name}" is already a placeholder (V2) template.`, { template_id: row.id });
    }
    const source = input.latex_with_placeholders ?? row.latex_content;
    const derived = this.derive(source);
    const changes: Partial<TemplateRow> = { kind: 'liquid', latex_content: source };
    if (source !== row.latex_content) changes.version = row.version + 1;
    const updated = await this.update(row, changes, derived);
    return { ...this.v2Body(updated), promoted: true as const };
  }

  // ---- render ----------------------------------------------------------------------------

  private async rateLimit(owner: AccountCaller): Promise<void> {
    const now = this.clock.now();
    const minuteEnd = new Date(Math.floor(now.getTime() / 60_000) * 60_000 + 60_000);
    const limit = this.config.renderPerMinute;
    const window = { key: renderMinuteKey(owner.account.id, now), limit, resetsAt: minuteEnd, expiresAt: new Date(minuteEnd.getTime() + 60_000) };
    const slot = await reserveOrRefuse(this.counters, now, window, (_, retry) => ({
      code: 'render_rate_limited',
      message: `At most ${limit} renders per minute per account; retry in ${retry} s.`,
      details: { limit },
      retryable: true,
    }));
    await this.counters.commit(slot.key, slot.lease);
  }

  /** Renders the latest version, or `version` when given (a kept one, see versions.ts). */
  async render(caller: Caller, idOrName: string, data: unknown, hooks: Pick<CompileContext, 'onAccepted'> = {}, version?: number) {
    return this.pipeline.run(
      caller,
      async () => {
        const owner = this.owner(caller);
        const latest = await this.get(owner.account.id, idOrName);
        const row = version === undefined || version === latest.version ? latest : { ...latest, ...(await this.keptVersion(latest, version)), id: latest.id };
        if (row.kind !== 'liquid') throw engineMismatch(row);
        if (typeof data !== 'object' || data === null || Array.isArray(data)) {
          throw errors.invalid_data_shape(`"data" must be a JSON object, got ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}.`, {
            got: data === null ? 'null' : Array.isArray(data) ? 'array' : typeof data,
          });
        }
        checkDataSize(data);
        return {
          source: row.latex_content,
          schema: derivedOf(row).schema,
          data: data as Record<string, unknown>,
          compiler: null,
          assetNames: () => this.assets.names(caller),
          // The saved-template render limit charges the account; the compile charges its quota.
          charge: () => this.rateLimit(owner),
          template: { id: Number(row.id), name: row.name, version: Number(row.version) },
        };
      },
      hooks,
    );
  }
}

/** Saved templates: data problems are listed in the message and the derived schema is returned. */
const SAVED_TEMPLATE: TemplateKind = {
  via: 'render',
  validate: validateData,
  invalid(problems, schema) {
    const parts = [
      problems.missing_fields.length ? `missing ${problems.missing_fields.join(', ')}` : '',
      ...problems.type_errors.map((e) => `${e.field} must be ${e.expected} (got ${e.got})`),
    ].filter(Boolean);
    return errors.schema_validation_failed(`data does not match the template schema: ${parts.join('; ')}.`, {
      ...problems,
      schema,
    });
  },
};

function placeholdersInV1(): ServiceError {
  return errors.liquid_placeholders_in_v1_template('The source contains Liquid placeholders ({{ … }} or {% … %}). Send placeholder_engine: "liquid" to store it as a placeholder template, or "none" to store it as raw LaTeX.',
    { allowed: ['liquid', 'none'] },
  );
}

function engineMismatch(row: TemplateRow): ServiceError {
  return errors.template_engine_mismatch(`"${row.name}" is a raw LaTeX (V1) template; convert it with POST /api/v2/templates/${row.id}/promote first.`,
    { template_id: row.id, placeholder_engine: 'none' },
  );
}

/** The optional promote body: absent, or an object with at most latex_with_placeholders. */
function promoteInput(body: unknown): PromoteInput {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw invalidField('body', 'type', 'must be object');
  }
  const { latex_with_placeholders, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) {
    throw validationFailed(
      unknown.map((field) => ({ field, rule: 'unknown_field', message: 'must NOT have additional properties' })),
      { message: `Request is invalid: unknown field ${unknown.join(', ')}` },
    );
  }
  return { latex_with_placeholders } as PromoteInput;
}
