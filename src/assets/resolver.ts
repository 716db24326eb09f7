// Assets of one compile (SPEC §2.1): inline `assets` (file name → base64), the binary files
// of `files` (project paths such as figures/plot.v2.png, under the project's name rule) and
// `use_stored_assets` (names in the account's library), validated, merged and checked
// against the plan's per-document limits before any quota is reserved. Returns the files
// the job workspace gets; each SVG and EPS also brings its converted PDF and the
// graphics.cfg hook.
import { tierOf, type Caller } from '../accounts/caller.js';
import type { Config } from '../config.js';
import { errors, type ServiceError, invalidField } from '../errors.js';
import { links, openSignupUrl } from '../links.js';
import { limitsOf, type Tier } from '../quota/plans.js';
import { convertedName, convertedPostScriptName, convertPostScript, convertSvg, svgGraphicsConfig } from './convert.js';
import { blobKey, type AssetService } from './library.js';
import { checkContent, checkName, checkProjectBinaryName, decodeBase64, quoteName, sanitisedSvg, type AssetFormat } from './validate.js';

export interface ResolvedAssets {
  /** `blob`: the key of a stored asset's bytes in the blob store (see TexJob.files). */
  files: Array<{ name: string; data: Buffer; blob?: string }>;
  ephemeral: string[];
  stored: string[];
}

/**
 * What a conversion costs its caller (docs/fair-use.md): Ghostscript and rsvg-convert run in a
 * sandbox for up to 15 s each, like TeX, so they take the caller's in-flight slot and count
 * their time as failure time, as a compile does.
 */
export interface ConversionMeter {
  /** Before the first conversion: takes the caller's in-flight slot (or throws its 429). */
  begin(): Promise<void>;
  /** One conversion's wall-clock time, and whether it failed (timed out, or refused the file). */
  spent(ms: number, failed: boolean): void;
}

/** What the compile pipeline asks of the asset library (declared here: compile/ imports assets/, never the reverse). */
export interface AssetResolver {
  /**
   * Validates inline `assets`, the binary files of `files` (paths such as figures/plot.png)
   * and `use_stored_assets`, and returns the files to place in the job; SVG and EPS are
   * converted under `meter`. Throws ServiceError.
   */
  forCompile(caller: Caller, input: { assets?: unknown; use_stored_assets?: unknown; binary?: Array<{ name: string; base64: unknown }> }, meter?: ConversionMeter): Promise<ResolvedAssets>;
}

/** Runs one conversion under `meter`. */
export async function metered<T>(meter: ConversionMeter | undefined, conversion: () => Promise<T>): Promise<T> {
  await meter?.begin();
  const started = performance.now();
  let failed = true;
  try {
    const result = await conversion();
    failed = false;
    return result;
  } finally {
    meter?.spent(performance.now() - started, failed);
  }
}

interface Pending {
  name: string;
  format: AssetFormat;
  data: Buffer;
  blob?: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field that is absent, null, or an empty map/list asks for nothing. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

export class LibraryAssetResolver implements AssetResolver {
  private readonly upgradeUrl: string;

  constructor(
    private readonly library: AssetService,
    private readonly config: Config,
  ) {
    this.upgradeUrl = links(config).upgradeUrl;
  }

  async forCompile(
    caller: Caller,
    input: { assets?: unknown; use_stored_assets?: unknown; binary?: Array<{ name: string; base64: unknown }> },
    meter?: ConversionMeter,
  ): Promise<ResolvedAssets> {
    const wantsInline = !isEmpty(input.assets);
    const wantsStored = !isEmpty(input.use_stored_assets);
    const binary = input.binary ?? [];
    if (!wantsInline && !wantsStored && binary.length === 0) return { files: [], ephemeral: [], stored: [] };

    const sent = [...(wantsInline ? ['assets'] : []), ...(wantsStored ? ['use_stored_assets'] : []), ...(binary.length > 0 ? ['files'] : [])];
    if (caller.kind !== 'account') throw this.anonymous(sent);
    const tier = tierOf(caller);
    const limits = limitsOf(tier);

    if (wantsInline && !isPlainObject(input.assets)) {
      throw invalidField('assets', 'type', 'must be an object mapping file name to base64 content');
    }
    const requested = wantsStored ? this.storedShape(input.use_stored_assets) : [];
    if (limits.maxAssetsPerDocument === 0) {
      throw errors.assets_not_allowed(`The ${tier} plan does not accept assets with a compile.`, {
        plan: tier,
        limit: 0,
        upgrade_url: this.upgradeUrl,
      });
    }
    if (wantsStored) this.library.libraryOwner(caller);

    const inlineMap = { ...((wantsInline ? input.assets : {}) as Record<string, unknown>) };
    const assetNames = Object.keys(inlineMap);
    const formats = new Map(assetNames.map((name) => [name, checkName(name)]));
    for (const file of binary) {
      formats.set(file.name, checkProjectBinaryName(file.name));
      if (file.name in inlineMap) {
        throw errors.asset_name_collision(`${quoteName(file.name)} is sent both in "assets" and in "files"; keep only one.`, { asset: file.name });
      }
      inlineMap[file.name] = file.base64;
    }
    const inlineNames = Object.keys(inlineMap);

    const inlineLower = new Set(inlineNames.map((name) => name.toLowerCase()));
    const clash = requested.find((name) => inlineLower.has(name.toLowerCase()));
    if (clash !== undefined) {
      throw errors.asset_name_collision(
        `Asset ${quoteName(clash)} is both sent inline in "assets" and named in "use_stored_assets"; keep only one.`,
        { asset: clash },
      );
    }

    const count = inlineNames.length + requested.length;
    if (count > limits.maxAssetsPerDocument) throw this.tooMany(tier, count);

    const rows = await this.library.byNames(caller.account.id, requested);
    const byLower = new Map(rows.map((row) => [row.name_lower, row]));
    const missing = requested.filter((name) => !byLower.has(name.toLowerCase()));
    if (missing.length > 0) {
      throw errors.asset_not_found(
        `Stored asset ${quoteName(missing[0]!)} is not in this account's library${missing.length > 1 ? ` (nor ${missing.slice(1).map(quoteName).join(', ')})` : ''}; upload it with POST /api/v1/assets or send it inline.`,
        { asset: missing[0], missing },
      );
    }

    const inline: Pending[] = inlineNames.map((name) => ({
      name,
      format: formats.get(name)!,
      data: decodeBase64(name, inlineMap[name]),
    }));
    const total = inline.reduce((sum, file) => sum + file.data.length, 0) + rows.reduce((sum, row) => sum + Number(row.size_bytes), 0);
    if (total > limits.maxAssetsBytesPerDocument) {
      throw errors.assets_too_large(
        `The assets of this compile decode to ${total} bytes; the ${tier} plan allows ${limits.maxAssetsBytesPerDocument} bytes per document.`,
        { limit: limits.maxAssetsBytesPerDocument, total_bytes: total, plan: tier, upgrade_url: this.upgradeUrl },
      );
    }
    for (const file of inline) checkContent(file.name, file.format, file.data);

    // Placed under the spelling the request used, so the document's \includegraphics matches.
    const stored: Pending[] = [];
    for (const name of requested) {
      const row = byLower.get(name.toLowerCase())!;
      stored.push({ name, format: checkName(row.name), data: await this.library.content(row), blob: blobKey(row.sha256) });
    }

    const files: ResolvedAssets['files'] = [...inline, ...stored].map(({ name, data, blob }) => ({ name, data, ...(blob ? { blob } : {}) }));
    const isolate = this.config.sandbox;
    const sentNames = new Set(files.map((file) => file.name.toLowerCase()));
    let converted = 0;
    for (const file of [...inline, ...stored]) {
      if (file.format === 'svg') {
        const svg = sanitisedSvg(file.name, file.data);
        files.push({ name: convertedName(file.name), data: await metered(meter, () => convertSvg(file.name, svg, { isolate })) });
        converted++;
      } else if (file.format === 'postscript') {
        // Conversion also proves the file parses, so a PDF the author sent along is not enough.
        const pdf = await metered(meter, () => convertPostScript(file.name, file.data, { isolate }));
        const name = convertedPostScriptName(file.name);
        if (!sentNames.has(name.toLowerCase())) files.push({ name, data: pdf });
        converted++;
      }
    }
    if (converted > 0) files.push({ name: 'graphics.cfg', data: Buffer.from(await svgGraphicsConfig()) });

    return {
      files,
      ephemeral: inlineNames,
      stored: requested.map((name) => byLower.get(name.toLowerCase())!.name),
    };
  }

  /** `use_stored_assets` must be a list of strings; repeats (in any case) count once. */
  private storedShape(value: unknown): string[] {
    if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
      throw errors.invalid_stored_assets_shape(
        'use_stored_assets must be an array of asset names (strings), e.g. ["logo.png"].',
        { field: 'use_stored_assets' },
      );
    }
    const seen = new Set<string>();
    return (value as string[]).filter((name) => {
      const key = name.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  private tooMany(tier: Tier, count: number): ServiceError {
    const limit = limitsOf(tier).maxAssetsPerDocument;
    return errors.too_many_assets(`This compile names ${count} assets; the ${tier} plan allows ${limit} per document.`, {
      limit,
      count,
      plan: tier,
      upgrade_url: this.upgradeUrl,
    });
  }

  private anonymous(sent: string[]): ServiceError {
    const signupUrl = openSignupUrl(this.config);
    const open = signupUrl !== undefined;
    const next_step = {
      action: open ? 'obtain_api_key' : 'retry_without_assets',
      ...(open ? { signup_url: signupUrl, card_required: false } : {}),
      env_var: 'QUIRE_API_KEY',
      header: 'Authorization: Bearer <key>',
      remove_fields: sent,
    };
    const fields = sent.map((field) => `"${field}"`).join(' and ');
    return errors.assets_not_available_anonymously(
      open
        ? `Assets need an API key: sign up at ${next_step.signup_url} and send it as "Authorization: Bearer <key>", or retry without ${fields}.`
        : `Assets need an API key: send one as "Authorization: Bearer <key>", or retry without ${fields}.`,
      { next_step },
    );
  }
}
