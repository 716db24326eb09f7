// The Liquid engine of placeholder templates (V2 and the public gallery): every value printed
// is LaTeX-escaped unless the author ends the placeholder with `| raw`; variables and filters
// are strict; parse, render time and memory are bounded; nothing can reach the file system.
import {
  Context,
  Liquid,
  LiquidError,
  Tag,
  filters as builtinFilters,
  type FilterImplOptions,
  type FS,
  type Template,
  type TagToken,
} from 'liquidjs';
import { errors, fail, ServiceError, isServiceError } from '../errors.js';
import { ASSET_NAME_RULE, isAssetName, isAssetStem } from '../asset-name.js';
import { ASSET_EXTENSIONS } from '../quota/plans.js';
import { protectLatexBraces } from './braces.js';
import { escapeLatex, stringify } from './escape.js';
import { renderPool } from './render-pool.js';
import { checkSecurity } from './security.js';

export interface ParsedTemplate {
  /** The source as the author wrote it. */
  source: string;
  templates: Template[];
}

export interface RenderOptions {
  /** Names in the account's asset library. When given, referenced names must be among them. */
  assetNames?: readonly string[];
}

export interface RenderedTemplate {
  latex: string;
  /** Library asset names the document uses (asset filter and \includegraphics), as stored. */
  assets: string[];
}

/**
 * Resource limits of one parse or render (liquidjs units: characters, milliseconds, and
 * characters or array elements). liquidjs counts an array element as 1 although it costs 8 bytes
 * of heap, so 8 million units keep a render's tracked allocations near 64 MB, far below the
 * render worker's heap (render-pool.ts): a worker that hits its heap limit with one large
 * allocation can abort the whole process (nodejs/node#47224), so that limit must stay a backstop.
 */
export const LIQUID_LIMITS = {
  parseLimit: 4_000_000,
  renderLimit: 10_000,
  memoryLimit: 8_000_000,
} as const;

const DEFAULT_DATE_FORMAT = '%B %-d, %Y';
const ASSET_REGISTER = 'quire:assets';

// No loader may read a file: include/render/layout are replaced below, and this file system
// refuses anything that still asks.
const noFiles: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => {
    throw new Error('templates cannot read files');
  },
  readFileSync: () => {
    throw new Error('templates cannot read files');
  },
  resolve: (_dir, file) => file,
  sep: '/',
};

function fileTag(name: string) {
  return class extends Tag {
    constructor(token: TagToken, remain: unknown, liquid: Liquid) {
      super(token, remain as never, liquid);
      const [line] = token.getPosition();
      throw securityError(name, line ?? 0);
    }
    *render(): Generator<unknown, void, unknown> {}
  };
}

function securityError(tag: string, line: number): ServiceError {
  return errors.template_security_violation(
    `Line ${line}: the Liquid tag "${tag}" reads other files, which templates may not do (rule 13: liquid_file_tags).`,
    { rule: 'liquid_file_tags', rule_number: 13, line },
  );
}

class AssetCollector {
  readonly used = new Map<string, string>();
  private readonly library: Map<string, string> | null;
  constructor(names: readonly string[] | undefined) {
    this.library = names ? new Map(names.map((n) => [n.toLowerCase(), n])) : null;
  }
  /** The stored name for `name`, matching case-insensitively and, for \includegraphics, by stem. */
  resolve(name: string, byStem: boolean): string | null {
    if (!this.library) return name;
    const exact = this.library.get(name.toLowerCase());
    if (exact) return exact;
    if (!byStem) return null;
    for (const ext of ASSET_EXTENSIONS) {
      const found = this.library.get(`${name}.${ext}`.toLowerCase());
      if (found) return found;
    }
    return null;
  }
  add(name: string): void {
    this.used.set(name.toLowerCase(), name);
  }
}

/** What the `asset` filter takes: an asset name (asset-name.ts) of an asset type, or its stem alone (the library is searched for it). */
function isAssetReference(name: string): boolean {
  const dot = name.lastIndexOf('.');
  if (dot < 0) return isAssetStem(name);
  return isAssetName(name) && (ASSET_EXTENSIONS as readonly string[]).includes(name.slice(dot + 1).toLowerCase());
}

function currency(this: { context: Context }, value: unknown, code: unknown = 'USD', locale: unknown = 'en-US'): string {
  const amount = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    throw new Error(`currency expects a number, got ${JSON.stringify(value) ?? String(value)}`);
  }
  try {
    return new Intl.NumberFormat(String(locale), { style: 'currency', currency: String(code) }).format(amount);
  } catch {
    throw new Error(`currency: "${String(code)}" is not an ISO 4217 currency code (e.g. USD, EUR, GBP)`);
  }
}

function date(this: { context: Context }, value: unknown, format: unknown = DEFAULT_DATE_FORMAT): unknown {
  if (value === null || value === undefined || value === '') throw new Error('date expects a date, got nothing');
  const builtin = builtinFilters.date as (this: unknown, ...args: unknown[]) => unknown;
  const out = builtin.call(this, value, format);
  // The builtin hands back its input when it cannot read a date, but a date can also format
  // to itself ("2026-12-01" with "%Y-%m-%d"). An empty format tells the two apart: it turns
  // every readable date into "" and leaves anything else as it was.
  if (out === value && builtin.call(this, value, '') !== '') {
    throw new Error(`date expects an ISO 8601 date such as "2026-01-15", got ${JSON.stringify(value)}`);
  }
  return out;
}

function asset(this: { context: Context }, value: unknown): string {
  const name = stringify(value);
  if (!isAssetReference(name)) {
    throw errors.render_asset_not_found(
      `asset: "${name}" is not an asset name (${ASSET_NAME_RULE}; the extension one of ${ASSET_EXTENSIONS.join(', ')}, or left out)`,
      { asset: name },
    );
  }
  const collector = this.context.getRegister(ASSET_REGISTER) as AssetCollector | undefined;
  const resolved = collector ? collector.resolve(name, false) : name;
  if (resolved === null) {
    throw errors.render_asset_not_found(`The template uses the asset "${name}", which is not in your asset library.`, {
      asset: name,
    });
  }
  collector?.add(resolved);
  return resolved;
}

function createEngine(): Liquid {
  const liquid = new Liquid({
    outputEscape: (value: unknown) => escapeLatex(stringify(value)),
    strictVariables: true,
    strictFilters: true,
    lenientIf: true,
    ownPropertyOnly: true,
    fs: noFiles,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    timezoneOffset: 0,
    dateFormat: DEFAULT_DATE_FORMAT,
    cache: false,
    ...LIQUID_LIMITS,
  });
  for (const name of ['include', 'render', 'layout', 'block']) liquid.registerTag(name, fileTag(name));
  liquid.registerFilter('currency', currency);
  liquid.registerFilter('date', date);
  liquid.registerFilter('asset', { handler: asset, raw: true } as FilterImplOptions);
  return liquid;
}

const engine = createEngine();

function lineOf(err: LiquidError): number | undefined {
  const token = (err as unknown as { token?: { getPosition?: () => [number, number] } }).token;
  const position = token?.getPosition?.();
  return position ? position[0] : undefined;
}

function originalOf(err: unknown): unknown {
  let current = err;
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth++) {
    if (isServiceError(current)) return current;
    const next = (current as { originalError?: unknown }).originalError;
    if (!next) break;
    current = next;
  }
  return current;
}

/** The message of a Liquid error without liquidjs's ", line:1, col:2" suffix and context. */
function bareMessage(err: Error): string {
  const original = originalOf(err);
  const message = original instanceof Error ? original.message : err.message;
  return message.replace(/, line:\d+, col:\d+$/, '').split('\n')[0]!;
}

function syntaxHint(message: string): string {
  if (/output .* not closed|unexpected token|invalid value expression|expected /i.test(message)) {
    return (
      'A placeholder is written {{ name }}. If these braces are LaTeX, not a placeholder, put a space between ' +
      'them ("{ {") or write {{ "{{" | raw }} for two literal braces.'
    );
  }
  if (/tag .* not closed|not found/i.test(message)) {
    return (
      'A Liquid tag is written {% if x %}...{% endif %}. If this "{%" is LaTeX (a brace, then a comment that ' +
      'starts with a Liquid tag name), write {{ "{" | raw }}% instead.'
    );
  }
  if (/undefined filter/i.test(message)) {
    return 'Available filters: the Liquid standard filters plus currency, date, asset and raw.';
  }
  return 'See the Quire documentation, docs/api.md, "Writing templates: Liquid inside LaTeX".';
}

function toError(err: unknown, code: 'liquid_syntax_error' | 'render_parse_failed' | 'render_failed'): ServiceError {
  const original = originalOf(err);
  if (isServiceError(original)) return original;
  if (!(err instanceof Error)) return fail(code, String(err), {});
  const line = LiquidError.is(err) ? lineOf(err as LiquidError) : undefined;
  const message = bareMessage(err);
  const where = line !== undefined ? `Line ${line}: ` : '';
  const details: { line?: number } = line !== undefined ? { line } : {};
  if (code === 'liquid_syntax_error' || code === 'render_parse_failed') {
    const hint = syntaxHint(message);
    return fail(code, `${where}${message}. ${hint}`, { ...details, hint });
  }
  return fail(code, `${where}${message}`, details);
}

function parseWith(source: string, code: 'liquid_syntax_error' | 'render_parse_failed'): ParsedTemplate {
  try {
    return { source, templates: engine.parse(protectLatexBraces(source)) };
  } catch (err) {
    // A filter name Liquid does not know is a render failure on the render path (SPEC §7.1).
    if (code === 'render_parse_failed' && err instanceof Error && /undefined filter/.test(err.message)) {
      throw toError(err, 'render_failed');
    }
    throw toError(err, code);
  }
}

/** Parses a template source; throws liquid_syntax_error (with `line`) when it is not valid Liquid. */
export function parseTemplate(source: string): ParsedTemplate {
  return parseWith(source, 'liquid_syntax_error');
}

/** Security policy then parse: what every save of a placeholder template runs. */
export function checkTemplate(source: string): ParsedTemplate {
  checkSecurity(source);
  return parseTemplate(source);
}

const INCLUDEGRAPHICS = /\\includegraphics\s*(?:\[[^\]]{0,500}\]\s*)?\{([^{}]{0,200})\}/g;

/**
 * Renders a template with `data` in a worker thread of the render pool. Throws
 * render_parse_failed (source not Liquid), render_failed (undefined variable or filter, bad
 * filter input, time or memory limit), render_asset_not_found, or template_security_violation
 * (a `raw` value smuggling a forbidden command).
 */
export function renderTemplate(
  source: string | ParsedTemplate,
  data: Record<string, unknown>,
  options: RenderOptions = {},
): Promise<RenderedTemplate> {
  return renderPool().render(typeof source === 'string' ? source : source.source, data, options.assetNames);
}

/** The render itself, on the calling thread: what a render worker runs. */
export async function renderInThread(
  source: string | ParsedTemplate,
  data: Record<string, unknown>,
  options: RenderOptions = {},
): Promise<RenderedTemplate> {
  const parsed = typeof source === 'string' ? parseWith(source, 'render_parse_failed') : source;
  const collector = new AssetCollector(options.assetNames);
  const context = new Context({ ...data }, engine.options, {}, { liquid: engine } as never);
  context.setRegister(ASSET_REGISTER, collector);
  let latex: string;
  try {
    latex = String(await engine.render(parsed.templates, context));
  } catch (err) {
    throw toError(err, 'render_failed');
  }
  // Escaped values cannot form commands; only `raw` output can, so the result is checked too.
  checkSecurity(latex, { rendered: true });
  for (const match of latex.matchAll(INCLUDEGRAPHICS)) {
    const name = match[1]!.trim();
    if (!isAssetReference(name)) continue;
    const resolved = collector.resolve(name, true);
    if (resolved) {
      collector.add(resolved);
    } else if (/\.[A-Za-z]+$/.test(name)) {
      throw errors.render_asset_not_found(
        `\\includegraphics{${name}} names an image that is not in your asset library; upload it with POST /api/v1/assets.`,
        { asset: name },
      );
    }
  }
  return { latex, assets: [...collector.used.values()] };
}

export { chooseCompiler } from './validate.js';
