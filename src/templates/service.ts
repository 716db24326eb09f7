// Saved templates: V1 raw LaTeX and V2 Liquid placeholder templates, the kind transitions of
// SPEC §3, and render. Every check runs before anything is written, so a refused save or
// promote leaves the stored template exactly as it was.
import type { Db } from '../storage/db.js';
import { requirePaidPlan, type AccountCaller, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { CompileContext } from '../compile/types.js';
import type { Config } from '../config.js';
import { errors, ServiceError, validationFailed, invalidField } from '../errors.js';
import { links } from '../links.js';
import type { Counters } from '../quota/counters.js';
import { renderMinuteKey } from '../quota/keys.js';
import { reserveOrRefuse } from '../quota/reserve.js';
import { RENDER_WALL_CLOCK_SECONDS } from '../quota/plans.js';
import type { TemplateRow } from '../storage/schema.js';
import { hasLiquidMarkup } from './braces.js';
import { checkDataSize } from './data-size.js';
import { checkTemplate } from './liquid.js';
import { deriveSchema } from './schema.js';
import type { CreateV2Input, PatchV2Input, PromoteInput, SaveTemplateInput } from './schemas.js';
import { RenderPipeline, type RenderCompiler, type TemplateKind } from './pipeline.js';
import { validateData } from './validate.js';
import { checkFields, missingField } from './fields.js';
import { type Derived, derivedOf, listRow, v1View, v2View } from './rows.js';
import { TemplateStore } from './store.js';

export interface AssetNames {
  /** Names in the caller's asset library. */
  names(caller: Caller): Promise<string[]>;
}


/** What a render may add to the data: a kept version, the `output` object and the TeX Live year. */
export interface RenderOptions {
  version?: number | undefined;
  output?: unknown;
  /** The request's year: over the template's stored one (compile/schemas.ts, texliveField). */
  texlive?: unknown;
  /** The request's `on_error` (compile/rules.ts parseOnError). */
  onError?: unknown;
}

export class TemplateService {
  private readonly pipeline: RenderPipeline;
  /** The stored templates and their kept versions (store.ts, versions.ts). */
  readonly rows: TemplateStore;

  /** Wall clock of one render call; tests shorten it. */
  get renderWallClockMs(): number {
    return this.pipeline.wallClockMs;
  }
  set renderWallClockMs(ms: number) {
    this.pipeline.wallClockMs = ms;
  }


  constructor(
    store: Db,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly counters: Counters,
    private readonly compiler: RenderCompiler,
    private readonly assets: AssetNames,
  ) {
    this.rows = new TemplateStore(store, clock, config);
    this.pipeline = new RenderPipeline(clock, compiler, SAVED_TEMPLATE, RENDER_WALL_CLOCK_SECONDS * 1000);
  }

  // ---- shared checks -------------------------------------------------------------------

  private owner(caller: Caller): AccountCaller {
    return requirePaidPlan(caller, 'Saved templates and render', links(this.config).upgradeUrl);
  }


  /** Security policy, Liquid parse and schema derivation of a placeholder source. */
  derive(source: string): Derived {
    checkTemplate(source);
    return deriveSchema(source);
  }

  /**
   * The TeX Live year a save stores: absent keeps the current one, null clears it (the server's
   * default), any other value must be a year this server serves (422 texlive_not_available, as
   * on compile: the compile service's one check).
   */
  private storedYear(value: unknown): string | null | undefined {
    if (value === undefined || value === null) return value;
    return this.compiler.texliveYear(value);
  }

  /** A served TeX Live year, the default for none, or texlive_not_available (batch render fixes its year with it). */
  texliveYear(requested: unknown): string {
    return this.compiler.texliveYear(requested);
  }

  /** The caller's template, after the plan check: where version reads and restores start. */
  async owned(caller: Caller, idOrName: string): Promise<TemplateRow> {
    return this.rows.get(this.owner(caller).account.id, idOrName);
  }

  // ---- V1 --------------------------------------------------------------------------------

  async saveV1(caller: Caller, input: SaveTemplateInput) {
    const owner = this.owner(caller);
    if (input.name === undefined) throw missingField('name');
    checkFields(owner, input, { field: 'latex_content', value: input.latex_content });
    const engine = input.placeholder_engine;
    if (engine !== undefined && engine !== 'liquid' && engine !== 'none') {
      throw errors.invalid_placeholder_engine(`placeholder_engine must be "liquid" or "none" (or omitted to keep the current kind), got ${JSON.stringify(engine)}.`,
        { allowed: ['liquid', 'none'] },
      );
    }
    const texlive = this.storedYear(input.texlive);
    const existing = await this.rows.find(owner.account.id, input.name);
    const source = input.latex_content;

    if (!existing) {
      if (source === undefined) throw missingField('latex_content');
      const kind = engine === 'liquid' ? 'liquid' : 'raw';
      if (engine === undefined && hasLiquidMarkup(source)) throw placeholdersInV1();
      const derived = kind === 'liquid' ? this.derive(source) : null;
      const row = await this.rows.insertCounted(owner, {
        account_id: owner.account.id,
        name: input.name,
        kind,
        description: input.description ?? '',
        latex_content: source,
        instructions: input.instructions ?? null,
        texlive: texlive ?? null,
        derived,
      });
      return { template: v1View(row), created: true, ...(derived ?? {}) };
    }

    const changes: Partial<TemplateRow> = {};
    if (input.description !== undefined) changes.description = input.description;
    if (input.instructions !== undefined) changes.instructions = input.instructions;
    if (texlive !== undefined) changes.texlive = texlive;
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
      const row = await this.rows.update(existing, changes, derived);
      return { template: v1View(row), created: false, ...derivedOf(row) };
    }

    if (engine === 'liquid') {
      const promoted = source ?? existing.latex_content;
      const derived = this.derive(promoted);
      changes.kind = 'liquid';
      if (sourceChanged) changes.version = existing.version + 1;
      const row = await this.rows.update(existing, changes, derived);
      return { template: v1View(row), created: false, promoted: true as const, ...derived };
    }
    if (engine === undefined && source !== undefined && hasLiquidMarkup(source)) throw placeholdersInV1();
    if (sourceChanged) changes.version = existing.version + 1;
    const row = await this.rows.update(existing, changes);
    return { template: v1View(row), created: false };
  }

  async list(caller: Caller, kind?: 'liquid') {
    const owner = this.owner(caller);
    let query = this.rows.db.selectFrom('templates').selectAll().where('account_id', '=', owner.account.id);
    if (kind) query = query.where('kind', '=', kind);
    const rows = await query.orderBy('name_lower').execute();
    return { templates: rows.map(listRow) };
  }

  async getV1(caller: Caller, idOrName: string) {
    const owner = this.owner(caller);
    return { template: v1View(await this.rows.get(owner.account.id, idOrName)) };
  }

  async delete(caller: Caller, idOrName: string): Promise<void> {
    const owner = this.owner(caller);
    const row = await this.rows.get(owner.account.id, idOrName);
    await this.rows.db.deleteFrom('templates').where('id', '=', row.id).execute();
  }

  // ---- V2 --------------------------------------------------------------------------------

  private v2Body(row: TemplateRow) {
    const template = v2View(row);
    return { template, schema: template.schema, sample_data: template.sample_data };
  }

  private async getV2Row(owner: AccountCaller, idOrName: string): Promise<TemplateRow> {
    const row = await this.rows.get(owner.account.id, idOrName);
    if (row.kind !== 'liquid') throw engineMismatch(row);
    return row;
  }

  async createV2(caller: Caller, input: CreateV2Input) {
    const owner = this.owner(caller);
    if (input.name === undefined) throw missingField('name');
    if (input.latex_with_placeholders === undefined) throw missingField('latex_with_placeholders');
    checkFields(owner, input, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    const texlive = this.storedYear(input.texlive);
    if (await this.rows.find(owner.account.id, input.name)) throw this.rows.nameTaken(input.name);
    const derived = this.derive(input.latex_with_placeholders);
    const row = await this.rows.insertCounted(owner, {
      account_id: owner.account.id,
      name: input.name,
      kind: 'liquid',
      description: input.description ?? '',
      latex_content: input.latex_with_placeholders,
      instructions: input.instructions ?? null,
      texlive: texlive ?? null,
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
    checkFields(owner, input, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    const texlive = this.storedYear(input.texlive);
    const row = await this.getV2Row(owner, idOrName);
    const changes: Partial<TemplateRow> = {};
    if (texlive !== undefined) changes.texlive = texlive;
    if (input.name !== undefined && input.name !== row.name) {
      const clash = await this.rows.find(owner.account.id, input.name);
      if (clash && clash.id !== row.id) throw this.rows.nameTaken(input.name);
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
    return this.v2Body(await this.rows.update(row, changes, derived));
  }

  async promote(caller: Caller, idOrName: string, body: unknown = {}) {
    const owner = this.owner(caller);
    const input = promoteInput(body);
    checkFields(owner, {}, { field: 'latex_with_placeholders', value: input.latex_with_placeholders });
    const row = await this.rows.get(owner.account.id, idOrName);
    if (row.kind === 'liquid') {
      throw errors.already_v2(`"${row.name}" is already a placeholder (V2) template.`, { template_id: row.id });
    }
    const source = input.latex_with_placeholders ?? row.latex_content;
    const derived = this.derive(source);
    const changes: Partial<TemplateRow> = { kind: 'liquid', latex_content: source };
    if (source !== row.latex_content) changes.version = row.version + 1;
    const updated = await this.rows.update(row, changes, derived);
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

  /**
   * Renders the latest version, or `version` when given (a kept one, see versions.ts); `output`
   * shapes the PDF as on compile (compile/output-schema.ts); `texlive` picks the TeX Live year
   * over the template's stored one; `onError` is compile's `on_error`.
   */
  async render(caller: Caller, idOrName: string, data: unknown, hooks: Pick<CompileContext, 'onAccepted' | 'background'> = {}, options: RenderOptions = {}) {
    const { version, output, onError } = options;
    return this.pipeline.run(
      caller,
      async (texliveOf) => {
        const owner = this.owner(caller);
        const row = await this.rows.versions.asOf(await this.rows.get(owner.account.id, idOrName), version);
        if (row.kind !== 'liquid') throw engineMismatch(row);
        // The request's year, else the template's (a setting of the template, not of a version).
        texliveOf(row.texlive);
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
          output,
          onError,
        };
      },
      hooks,
      options.texlive,
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
