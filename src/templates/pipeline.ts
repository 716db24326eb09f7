// One render pipeline for saved and gallery templates: load the template and the caller's data,
// validate the data against the template's JSON Schema (the one validator, data-schema.ts),
// charge the caller, render the Liquid in the render pool and compile the result, all under one
// wall-clock deadline read from one clock. The two kinds differ only in where the template
// comes from (load), how a data problem is worded, and who is charged. The TeX Live year is
// fixed as soon as the template is known (the request's, else the template's, else the
// default), so a year the server does not serve is refused before anyone is charged.
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { CompileContext, CompileSuccess } from '../compile/types.js';
import { checkOutputShape } from '../compile/output.js';
import { parseOnError } from '../compile/rules.js';
import { errors, ServiceError } from '../errors.js';
import type { Compiler } from '../quota/plans.js';
import type { DataProblems, JsonSchema } from './data-schema.js';
import { renderTemplate } from './liquid.js';
import { chooseCompiler } from './validate.js';

export interface RenderCompiler {
  compile(
    caller: Caller,
    input: { latex?: unknown; compiler?: unknown; texlive?: unknown; use_stored_assets?: unknown; output?: unknown; on_error?: unknown },
    context: Pick<CompileContext, 'onAccepted' | 'background'> & { via: 'render' | 'public_render'; deadline: number },
  ): Promise<CompileSuccess>;
  /** A served TeX Live year (the default for none), or 422 texlive_not_available: CompileService.texliveYear. */
  texliveYear(requested: unknown): string;
}

/**
 * Fixes the render's TeX Live year once: the request's, else `stored` (the template's own year,
 * null or absent for none), else the server's default. Throws texlive_not_available for a year
 * the server does not serve. A door's load calls it once it knows the template.
 */
export type TexliveOf = (stored?: string | null) => string;

/** A template ready to render, as its door found it. */
export interface LoadedTemplate<T> {
  source: string;
  schema: JsonSchema;
  /** The caller's data, already checked to be an object within the size cap. */
  data: Record<string, unknown>;
  /** What the template sees once the data is valid (the data itself when not given). */
  values?(data: Record<string, unknown>): Record<string, unknown>;
  /** The engine, or null to choose it from the rendered LaTeX. */
  compiler: Compiler | null;
  /** Asset names the template may use (every name when not given). */
  assetNames?(): Promise<readonly string[]>;
  /** Runs once the data is valid, before anything renders (a rate limit). */
  charge?(): Promise<void>;
  /** The `template` object of the success body. */
  template: T;
  /** The request's `output` object (compile/output-schema.ts), checked by the compile service. */
  output?: unknown;
  /** The request's `on_error` (compile/rules.ts parseOnError): "continue" delivers a PDF TeX wrote despite errors. */
  onError?: unknown;
}

/** How one kind of template judges and words its data. */
export interface TemplateKind {
  via: 'render' | 'public_render';
  validate(schema: JsonSchema, data: Record<string, unknown>): DataProblems | null;
  /** The schema_validation_failed error for `problems`. */
  invalid(problems: DataProblems, schema: JsonSchema): ServiceError;
}

export class RenderPipeline {
  constructor(
    private readonly clock: Clock,
    private readonly compiler: RenderCompiler,
    private readonly kind: TemplateKind,
    /** Wall clock of one render call; tests shorten it. */
    public wallClockMs: number,
  ) {}

  /** `texlive` is the request's year (undefined or null: none asked for). */
  async run<T>(
    caller: Caller,
    load: (texlive: TexliveOf) => Promise<LoadedTemplate<T>>,
    hooks: Pick<CompileContext, 'onAccepted' | 'background'> = {},
    texlive?: unknown,
  ) {
    const year = new RenderYear((requested) => this.compiler.texliveYear(requested), texlive);
    try {
      return await this.runWith(caller, load, hooks, year);
    } catch (err) {
      // As on compile: every 422 once the year is fixed says which TeX Live (a refused year says so itself).
      throw year.fixed !== undefined && err instanceof ServiceError && err.status === 422 && err.details.texlive === undefined ? err.withDetails({ texlive: year.fixed }) : err;
    }
  }

  private async runWith<T>(caller: Caller, load: (texlive: TexliveOf) => Promise<LoadedTemplate<T>>, hooks: Pick<CompileContext, 'onAccepted' | 'background'>, year: RenderYear) {
    const started = this.clock.ms();
    const wallClockMs = this.wallClockMs;
    const deadline = started + wallClockMs;
    const t = await load(year.of);
    // A door whose load did not fix the year (the gallery's templates store none) gets the request's or the default.
    year.of();
    const problems = this.kind.validate(t.schema, t.data);
    if (problems) throw this.kind.invalid(problems, t.schema);
    // A malformed `output` or `on_error` is refused before the render limit is charged (the rest is the compile's check).
    checkOutputShape(t.output);
    // Absent and "stop" hand the compile what SPEC's render always did: no on_error at all.
    const onError = parseOnError(t.onError) === 'continue' ? { on_error: 'continue' } : {};
    await t.charge?.();
    return this.withinWallClock(deadline, wallClockMs, async () => {
      const assetNames = t.assetNames ? await t.assetNames() : undefined;
      const values = t.values ? t.values(t.data) : t.data;
      const rendered = await renderTemplate(t.source, values, assetNames ? { assetNames } : {});
      const input = rendered.assets.length > 0 ? { use_stored_assets: rendered.assets } : {};
      const result = await this.compiler.compile(
        caller,
        { latex: rendered.latex, compiler: t.compiler ?? chooseCompiler(rendered.latex), ...(year.named !== undefined ? { texlive: year.named } : {}), ...input, ...(t.output !== undefined ? { output: t.output } : {}), ...onError },
        { via: this.kind.via, deadline, ...hooks },
      );
      return { ...result, template: t.template, render_time_ms: this.clock.ms() - started };
    });
  }

  private async withinWallClock<T>(deadline: number, wallClockMs: number, work: () => Promise<T>): Promise<T> {
    const seconds = Math.round(wallClockMs / 1000);
    const timeout = () =>
      errors.render_total_timeout(`The render took longer than ${seconds} s and was stopped; it was not charged.`, {
        limit_seconds: seconds,
        retryable: true,
      });
    let timer: NodeJS.Timeout | undefined;
    const expiry = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeout()), Math.max(0, deadline - this.clock.ms()));
    });
    try {
      return await Promise.race([work(), expiry]);
    } catch (err) {
      // A compile cut short by the render deadline is the render's timeout, not the plan's.
      if (err instanceof ServiceError && err.code === 'compilation_timeout' && this.clock.ms() >= deadline - 50) throw timeout();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** One render's TeX Live year, fixed once by `of` (see TexliveOf). */
class RenderYear {
  /** The served year the render runs with, once fixed. */
  fixed: string | undefined;
  /** The year the request or the template named; undefined lets the compile take its default. */
  named: string | undefined;

  constructor(
    private readonly check: (requested: unknown) => string,
    private readonly requested: unknown,
  ) {}

  readonly of: TexliveOf = (stored) => {
    if (this.fixed !== undefined) return this.fixed;
    const fromTemplate = this.requested === undefined || this.requested === null;
    const named: unknown = fromTemplate ? (stored ?? undefined) : this.requested;
    try {
      this.fixed = this.check(named);
    } catch (err) {
      if (!(fromTemplate && named !== undefined && err instanceof ServiceError && err.code === 'texlive_not_available')) throw err;
      // The template's own year, which this server no longer serves: say where the year came from.
      const available = err.details.available as string[];
      throw errors.texlive_not_available(
        `The template renders with TeX Live ${String(named)}, which this server does not serve${available.length > 0 ? ` (it has ${available.join(', ')})` : ''}. Send \`texlive\` with the render, or change the template's year.`,
        { texlive: named, available },
      );
    }
    this.named = named === undefined ? undefined : this.fixed;
    return this.fixed;
  };
}
