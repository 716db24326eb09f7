// The error catalogue (SPEC §7), modelled on fastify's lib/errors.js: one table row per code
// with its HTTP status, default message, the body fields it carries (a TypeScript type), whether
// it is retryable and the advice MCP shows an agent. Typed factories are built from the table,
// so a throw site names a code once and the compiler checks its fields. Services throw
// ServiceError; the HTTP and MCP adapters turn it into their wire shape.

/** One broken field rule in the `fields` list of a `validation_failed` body. */
export interface FieldError {
  field: string;
  rule: string;
  limit?: number;
  message: string;
}

/** Extra body fields an error carries next to `error` and `message`. */
export type ErrorDetails = Record<string, unknown>;

/** Response headers an error implies (Retry-After is derived, never passed: see retryAfterHeader). */
export type ErrorHeaders = Record<string, string>;

/**
 * A catalogue row. `retryable` says whether sending the same request again can succeed: always
 * (`true`), never (`false`), or as the error's own `retryable` body field says (`'body'`).
 * `advice` is what MCP tells an agent to do next; `null` when the message says it all (MCP
 * then falls back on its generic "transient: retry later" for retryable and 5xx errors).
 * `D` types the body fields; it exists only for the compiler.
 */
interface Entry<D extends object> {
  readonly status: number;
  readonly message: string;
  readonly retryable: boolean | 'body';
  readonly advice: string | null;
  readonly _details?: D;
}

function entry<D extends object = NoDetails>(row: Omit<Entry<D>, '_details'>): Entry<D> {
  return row;
}

// Body field groups several codes share.
type NoDetails = Record<string, never>;
type Plan = string;
type NextStep = object;
/** A transient refusal: retry after `retry_after_seconds` (sent as Retry-After too). */
interface RetryLater {
  retryable: boolean;
  retry_after_seconds: number;
}
interface PlanLimit {
  limit: number;
  plan: Plan;
  upgrade_url: string;
}
interface CountLimit extends PlanLimit {
  count: number;
}
interface SizeLimit {
  limit: number;
  size_bytes: number;
  plan: Plan;
  plan_required: Plan | null;
  upgrade_url: string;
  retryable: boolean;
}
/** A 422 compile failure also carries the caller's usage (added by the compile service). */
interface CompileFailure {
  plan: Plan;
  retryable: boolean;
  usage?: unknown;
}
interface QuotaUsedUp {
  limit: number;
  used: number;
  resets_at: string;
  retryable: boolean;
  retry_after_seconds: number;
  plan?: Plan;
  upgrade_url?: string;
  next_step?: NextStep;
}
interface MonthlyQuotaUsedUp extends QuotaUsedUp {
  monthly_limit?: number;
  used_this_month?: number;
  grace_used?: number;
  grace_allowance?: number;
}
/** Asset name and format errors name the file: `asset` (assets), `file` (project files) or `name` (the TeX layer). */
interface AssetProblem {
  [field: string]: unknown;
  asset?: string;
  file?: string;
  name?: string;
}
/** What was wrong with a `project_zip`: `reason`, and the `entry` or `limit` involved. */
interface ZipProblem {
  reason: string;
  entry?: string;
  limit?: number;
  candidates?: string[];
}
interface LiquidProblem {
  line?: number;
  hint?: string;
  limit?: number;
}
interface TemplateRef {
  template_id: number | string;
}

const NEEDS_KEY_ADVICE = 'This tool needs an API key: configure the MCP client to send "Authorization: Bearer <key>".';
const DATA_ADVICE = 'Correct `data` so it matches the template schema (see get_public_template / get_template) and retry.';
const KEYLESS_ADVICE = 'The keyless tier is used up: the user can get an API key (see next_step) or wait until the reset.';
const MONTHLY_ADVICE = "The account's monthly compilations are used up: tell the user (upgrade or wait until resets_at).";

export const CATALOGUE = {
  // HTTP conventions
  not_found: entry<{ asset?: string; slug?: string }>({ status: 404, message: 'Not found.', retryable: false, advice: null }),
  invalid_json: entry({ status: 400, message: 'Request body is not valid JSON.', retryable: false, advice: null }),
  unsupported_media_type: entry({ status: 415, message: 'Send the request body as application/json.', retryable: false, advice: null }),
  payload_too_large: entry({ status: 413, message: 'Request body is larger than this server accepts.', retryable: false, advice: null }),
  validation_failed: entry<{ fields: FieldError[] }>({
    status: 422,
    message: 'Request is invalid.',
    retryable: false,
    advice: 'Correct the named arguments and call the tool again.',
  }),
  method_not_allowed: entry({ status: 405, message: 'This method is not allowed here.', retryable: false, advice: null }),
  internal_error: entry({ status: 500, message: 'Something went wrong on our side; retry later.', retryable: true, advice: null }),
  server_busy: entry<RetryLater>({ status: 503, message: 'Every compile slot is busy; retry shortly.', retryable: true, advice: null }),
  // Refused at the edge, before routing or parsing finished (docs/http-hardening.md)
  bad_request: entry({ status: 400, message: 'The request was refused.', retryable: false, advice: null }),
  json_too_deep: entry<{ limit: number }>({ status: 400, message: 'The JSON nests too deep; send flatter JSON.', retryable: false, advice: null }),
  request_timeout: entry({ status: 408, message: 'The request was not received in time.', retryable: true, advice: null }),
  uri_too_long: entry<{ limit?: number }>({ status: 414, message: 'The URL is longer than this server accepts.', retryable: false, advice: null }),
  headers_too_large: entry({ status: 431, message: 'The request headers are larger than this server accepts.', retryable: false, advice: null }),
  origin_not_allowed: entry<{ origin: string }>({ status: 403, message: 'Browser pages from this origin may not call /mcp.', retryable: false, advice: null }),
  // Shared infrastructure down or full (retryable; see docs/storage-and-faults.md)
  database_unavailable: entry<RetryLater>({ status: 503, message: 'The database is unreachable right now; retry in a few seconds.', retryable: true, advice: null }),
  redis_unavailable: entry<RetryLater>({ status: 503, message: 'Redis is unreachable right now; retry in a few seconds.', retryable: true, advice: null }),
  storage_unavailable: entry<RetryLater>({ status: 503, message: 'The blob store is unreachable right now; retry in a few seconds.', retryable: true, advice: null }),
  storage_full: entry<RetryLater>({ status: 507, message: 'The server has no room to store this right now; retry later.', retryable: true, advice: null }),
  // Authentication
  missing_api_key: entry({ status: 401, message: 'This operation needs an API key.', retryable: false, advice: NEEDS_KEY_ADVICE }),
  invalid_api_key: entry({
    status: 401,
    message: 'The API key is malformed, unknown or revoked.',
    retryable: false,
    advice: 'The API key sent with this MCP connection is malformed, unknown or revoked. Ask the user for a valid key; do not retry with the same one.',
  }),
  // Compile and render (§7.1)
  texlive_not_available: entry<{ texlive: unknown; available: string[] }>({
    status: 422,
    message: 'This TeX Live year is not installed on this server.',
    retryable: false,
    advice: 'Call again with one of the years in `available`, or leave `texlive` out for the newest.',
  }),
  compiler_not_available: entry<{ compiler: string; allowed_compilers: string[] } & Omit<SizeLimit, 'limit' | 'size_bytes'>>({
    status: 403,
    message: 'This compiler is not included in the plan.',
    retryable: false,
    advice: null,
  }),
  assets_not_allowed: entry<PlanLimit>({ status: 403, message: 'This plan does not accept assets with a compile.', retryable: false, advice: null }),
  plan_required: entry<{ plan: Plan; upgrade_url: string }>({ status: 403, message: 'This feature needs a paid plan.', retryable: false, advice: null }),
  latex_too_large: entry<SizeLimit & { preview_attempts_per_day?: number; preview_attempts_remaining_today?: number }>({
    status: 413,
    message: 'The source is over the size limit of the plan.',
    retryable: false,
    advice: null,
  }),
  assets_too_large: entry<PlanLimit & { total_bytes: number }>({ status: 413, message: 'The assets of this compile are over the plan limit.', retryable: false, advice: null }),
  storage_quota_exceeded: entry<PlanLimit & { asset: string; total_bytes: number; size_bytes: number; remaining_bytes: number }>({
    status: 413,
    message: "The upload would pass the plan's stored bytes.",
    retryable: false,
    advice: null,
  }),
  data_too_large: entry<{ limit_bytes: number }>({ status: 413, message: '"data" is too large; send less data per render.', retryable: false, advice: null }),
  not_latex_source: entry<{ requirements: string[]; example_template: string; retryable: boolean; usage?: unknown }>({
    status: 422,
    message: 'This is not LaTeX source: the service compiles complete LaTeX documents only.',
    retryable: false,
    advice: 'Send a complete LaTeX document (\\documentclass{...} ... \\begin{document} ... \\end{document}), not plain text or markdown.',
  }),
  compilation_failed: entry<CompileFailure & { log: string; line?: number; diagnosis?: unknown; agent_hint?: string }>({
    status: 422,
    message: 'Compilation failed; see the log.',
    retryable: 'body',
    advice: 'Fix the LaTeX source as described and call the tool again with the whole corrected source.',
  }),
  compilation_timeout: entry<CompileFailure & { timeout_seconds?: number; log?: string; agent_hint?: string; upgrade_url?: string }>({
    status: 422,
    message: 'Compilation did not finish in time and was stopped.',
    retryable: 'body',
    advice: 'The document took too long to compile: simplify it (fewer pages, lighter packages, no loops) and retry.',
  }),
  page_limit_exceeded: entry<CompileFailure & { pages: number; limit: number; plan_required: Plan | null; upgrade_url: string }>({
    status: 422,
    message: 'The PDF has more pages than the plan allows.',
    retryable: false,
    advice: null,
  }),
  pdf_too_large: entry<CompileFailure & { limit: number; plan_limit?: number; upgrade_url: string }>({
    status: 422,
    message: 'The PDF is larger than the plan allows.',
    retryable: false,
    advice: null,
  }),
  pdf_size_unknown: entry<CompileFailure & { agent_hint: string }>({
    status: 422,
    message: 'The PDF was produced but its size and pages could not be measured; retry the same request.',
    retryable: true,
    advice: null,
  }),
  pdf_active_content: entry<CompileFailure & { found: string; agent_hint: string }>({
    status: 422,
    message: 'The PDF carries active content and was not delivered.',
    retryable: false,
    advice: null,
  }),
  pdf_standard_failed: entry<CompileFailure & { pdf_standard: string; reasons: string[]; agent_hint: string }>({
    status: 422,
    message: 'The PDF does not meet the PDF/A level asked for in output.pdf_standard.',
    retryable: false,
    advice: null,
  }),
  tagging_unsupported_engine: entry<{ compiler: string; engines: string[]; field: string }>({
    status: 422,
    message: 'This engine cannot write a tagged (accessible) PDF: XeTeX writes no marked content for the structure tree. Use lualatex or pdflatex.',
    retryable: false,
    advice: null,
  }),
  pdf_check_too_large: entry<{ limit: number; bytes: number }>({
    status: 413,
    message: 'The PDF to check is larger than this server checks.',
    retryable: false,
    advice: null,
  }),
  output_failed: entry<CompileFailure & { reasons: string[] }>({
    status: 422,
    message: 'The output step (output.*) could not process the PDF TeX wrote.',
    retryable: false,
    advice: null,
  }),
  assets_not_available_anonymously: entry<{ next_step: NextStep }>({ status: 422, message: 'Assets need an API key.', retryable: false, advice: null }),
  too_many_assets: entry<CountLimit>({ status: 422, message: 'This compile names more assets than the plan allows.', retryable: false, advice: null }),
  invalid_asset_filename: entry<AssetProblem>({ status: 422, message: 'An asset name breaks the asset name rule.', retryable: false, advice: null }),
  invalid_asset_format: entry<AssetProblem>({ status: 422, message: 'An asset is not in an allowed format.', retryable: false, advice: null }),
  invalid_project_zip: entry<ZipProblem>({ status: 422, message: 'The project zip is refused.', retryable: false, advice: null }),
  invalid_asset_encoding: entry<{ asset: string }>({ status: 422, message: 'An asset is not valid base64.', retryable: false, advice: null }),
  asset_not_found: entry<{ asset: string | undefined; missing: string[] }>({ status: 422, message: "A stored asset is not in this account's library.", retryable: false, advice: null }),
  asset_name_collision: entry<{ asset: string }>({ status: 422, message: 'An asset is both sent inline and named in "use_stored_assets".', retryable: false, advice: null }),
  invalid_stored_assets_shape: entry<{ field: string }>({
    status: 422,
    message: 'use_stored_assets must be an array of asset names (strings).',
    retryable: false,
    advice: null,
  }),
  schema_validation_failed: entry<{ missing_fields: string[]; type_errors: unknown[]; schema?: unknown }>({
    status: 422,
    message: 'data does not match the template schema.',
    retryable: false,
    advice: DATA_ADVICE,
  }),
  invalid_data: entry<{ got?: string; expected?: string; missing_fields?: string[] }>({
    status: 422,
    message: '`data` must be a JSON object matching the template schema.',
    retryable: false,
    advice: DATA_ADVICE,
  }),
  invalid_color: entry<{ colors: string[]; default_color: string }>({ status: 422, message: 'This template does not offer that color.', retryable: false, advice: null }),
  invalid_data_shape: entry<{ got: string }>({ status: 422, message: '"data" must be a JSON object.', retryable: false, advice: DATA_ADVICE }),
  template_engine_mismatch: entry<TemplateRef & { placeholder_engine: string }>({
    status: 422,
    message: 'This is a raw LaTeX (V1) template; promote it first.',
    retryable: false,
    advice: null,
  }),
  render_parse_failed: entry<LiquidProblem>({ status: 422, message: 'The template source is not valid Liquid.', retryable: false, advice: null }),
  render_failed: entry<LiquidProblem & Record<string, unknown>>({ status: 422, message: 'The template could not be rendered.', retryable: false, advice: null }),
  render_asset_not_found: entry<{ asset: string }>({ status: 422, message: 'The template uses an asset that is not in your asset library.', retryable: false, advice: null }),
  template_not_found: entry<{ id: string }>({ status: 404, message: 'No such template in this account.', retryable: false, advice: null }),
  template_version_not_found: entry<{ id: string; version: number; kept_versions: number[] }>({
    status: 404,
    message: 'This template has no such version (never saved, or pruned past the plan limit).',
    retryable: false,
    advice: 'Call list_template_versions for the versions kept; omit `version` for the latest.',
  }),
  validate_rate_limited: entry<RetryLater & { limit: number }>({ status: 429, message: 'Too many validate calls per minute; retry shortly.', retryable: true, advice: null }),
  rate_limit: entry<MonthlyQuotaUsedUp>({ status: 429, message: 'The limit is used up.', retryable: 'body', advice: MONTHLY_ADVICE }),
  rate_limit_exceeded: entry<MonthlyQuotaUsedUp>({ status: 429, message: 'The monthly limit is used up.', retryable: false, advice: MONTHLY_ADVICE }),
  render_rate_limited: entry<RetryLater & { limit: number }>({ status: 429, message: 'Too many renders per minute; retry shortly.', retryable: true, advice: null }),
  anonymous_quota_exhausted: entry<QuotaUsedUp>({
    status: 429,
    message: 'The keyless daily limit of this address is used up.',
    retryable: false,
    advice: KEYLESS_ADVICE,
  }),
  preview_in_progress: entry<RetryLater & { plan: Plan }>({
    status: 429,
    message: 'A size preview is already compiling for this account; previews run one at a time.',
    retryable: true,
    advice: null,
  }),
  too_many_concurrent_compiles: entry<RetryLater & { plan: Plan; limit: number; in_flight: number }>({
    status: 429,
    message: 'This caller already has as many compiles in flight as its plan allows; retry when one finishes.',
    retryable: true,
    advice: 'Wait for your other compiles to finish (or send fewer at once), then retry after retry_after_seconds.',
  }),
  failure_budget_exhausted: entry<RetryLater & { plan: Plan; budget_seconds: number; used_seconds: number; window_seconds: number; resets_at: string }>({
    status: 429,
    message: 'Failed and timed-out compiles used up this window\'s free TeX time; retry after the window resets.',
    retryable: true,
    advice: 'Your recent compiles failed or timed out and used up the free failure time: fix the document (loops, heavy content) before retrying after retry_after_seconds.',
  }),
  anonymous_capacity_exhausted: entry<RetryLater & { next_step: NextStep }>({
    status: 503,
    message: 'The keyless tier is at its hourly capacity on this server; retry later or use an API key.',
    retryable: true,
    advice: KEYLESS_ADVICE,
  }),
  preview_unavailable: entry<RetryLater & { plan: Plan; limit: number }>({
    status: 503,
    message: 'Size previews are unavailable right now; retry in a minute.',
    retryable: true,
    advice: null,
  }),
  render_total_timeout: entry<{ limit_seconds: number; retryable: boolean }>({ status: 504, message: 'The render took too long and was stopped.', retryable: true, advice: null }),
  asset_storage_error: entry<{ asset: string }>({ status: 500, message: 'A stored asset is listed but its content is missing; upload it again.', retryable: false, advice: null }),
  // Templates and stored assets (§7.2)
  liquid_placeholders_in_v1_template: entry<{ allowed: string[] }>({
    status: 422,
    message: 'The source contains Liquid placeholders; send placeholder_engine "liquid" or "none".',
    retryable: false,
    advice: null,
  }),
  liquid_syntax_error: entry<LiquidProblem>({ status: 422, message: 'The source does not parse as Liquid.', retryable: false, advice: null }),
  template_security_violation: entry<{ rule: string; rule_number: number; line?: number }>({
    status: 422,
    message: 'The source breaks the template security policy.',
    retryable: false,
    advice: null,
  }),
  engine_downgrade_not_supported: entry<TemplateRef>({ status: 422, message: 'A placeholder template cannot be turned back into raw LaTeX.', retryable: false, advice: null }),
  invalid_placeholder_engine: entry<{ allowed: string[] }>({ status: 422, message: 'placeholder_engine must be "liquid" or "none".', retryable: false, advice: null }),
  already_v2: entry<TemplateRef>({ status: 422, message: 'This is already a placeholder (V2) template.', retryable: false, advice: null }),
  name_taken: entry<{ name: string }>({ status: 422, message: 'A template with this name already exists in this account.', retryable: false, advice: null }),
  template_limit_reached: entry<CountLimit>({ status: 403, message: "The plan's saved-template count is reached.", retryable: false, advice: null }),
  asset_limit_reached: entry<CountLimit>({ status: 403, message: "The plan's stored-asset count is reached.", retryable: false, advice: null }),
  // Signed PDF links
  invalid_signature: entry({ status: 403, message: 'This PDF link is not valid.', retryable: false, advice: null }),
  link_expired: entry<{ expired_at: string }>({ status: 410, message: 'This PDF link has expired.', retryable: false, advice: null }),
  range_not_satisfiable: entry<{ size_bytes?: number }>({ status: 416, message: 'The range is outside the PDF.', retryable: false, advice: null }),
  // Sign-up
  signup_closed: entry({ status: 403, message: 'Sign-up is closed on this server.', retryable: false, advice: null }),
  email_taken: entry({ status: 409, message: 'An account for this address already exists.', retryable: false, advice: null }),
  // Async jobs, webhooks and idempotency keys (extension, docs/async-and-webhooks.md)
  async_not_available_anonymously: entry<{ retryable: boolean }>({ status: 422, message: 'Async requests need an API key.', retryable: false, advice: null }),
  invalid_callback_url: entry<{ callback_url: string; reason: string }>({ status: 422, message: 'callback_url is not allowed.', retryable: false, advice: null }),
  job_not_found: entry<{ job_id: string }>({ status: 404, message: 'No such job for this account.', retryable: false, advice: null }),
  job_interrupted: entry<{ retryable: boolean }>({ status: 503, message: 'The server stopped while this job ran; send the request again.', retryable: true, advice: null }),
  invalid_idempotency_key: entry<{ limit: number }>({ status: 422, message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.', retryable: false, advice: null }),
  idempotency_key_reused: entry<{ idempotency_key: string; retryable: boolean }>({
    status: 422,
    message: 'This Idempotency-Key was used with a different request; use a new key.',
    retryable: false,
    advice: null,
  }),
  idempotency_key_in_progress: entry<RetryLater & { idempotency_key: string }>({
    status: 409,
    message: 'A request with this Idempotency-Key is still running; retry shortly.',
    retryable: true,
    advice: null,
  }),
  // PAdES signatures and stored signing identities (extension, issue 40; docs/pdf-output.md#signatures)
  invalid_pkcs12: entry<{ field: string; reason: string }>({ status: 422, message: 'The signing identity is not a usable PKCS#12 file.', retryable: false, advice: null }),
  pkcs12_password_incorrect: entry<{ field: string }>({ status: 422, message: 'The PKCS#12 password is wrong.', retryable: false, advice: null }),
  signing_certificate_not_valid: entry<{ field: string; reason: string; not_before: string; not_after: string }>({
    status: 422,
    message: 'The signing certificate is expired or not yet valid.',
    retryable: false,
    advice: null,
  }),
  signing_identity_not_found: entry<{ identity: string }>({ status: 404, message: 'No signing identity of this name in this account.', retryable: false, advice: null }),
  signing_identity_exists: entry<{ identity: string }>({ status: 409, message: 'A signing identity of this name already exists; delete it first.', retryable: false, advice: null }),
  timestamp_not_configured: entry({ status: 422, message: 'This server has no timestamp authority (QUIRE_TSA_URL); sign without timestamp.', retryable: false, advice: null }),
  timestamp_failed: entry<{ reason: string; retryable: boolean }>({ status: 422, message: 'The timestamp authority did not give a timestamp.', retryable: 'body', advice: null }),
};

export type ErrorCode = keyof typeof CATALOGUE;

/** The body fields `code` carries next to `error` and `message`. */
export type DetailsOf<C extends ErrorCode> = (typeof CATALOGUE)[C] extends Entry<infer D> ? D : never;

export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

/** Code → HTTP status, read from the catalogue (docs/errors.md lists the same pairs). */
export const ERROR_STATUS = Object.fromEntries(ERROR_CODES.map((code) => [code, CATALOGUE[code].status])) as { readonly [C in ErrorCode]: number };

/** Whether `code` is in the catalogue (an own key, so "constructor" and the like are not). */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(CATALOGUE, code);
}

/** The advice MCP shows an agent for `code`, or undefined when the catalogue has none. */
export function adviceFor(code: string): string | undefined {
  return isErrorCode(code) ? (CATALOGUE[code].advice ?? undefined) : undefined;
}

/**
 * The one place Retry-After is set: an error whose body says `retry_after_seconds` sends it as
 * the header too, unless the body says `retryable: false` (a used-up monthly or daily quota
 * tells when it resets, but retrying before then is pointless, so no header).
 */
export function retryAfterHeader(details: ErrorDetails): ErrorHeaders {
  const seconds = details.retry_after_seconds;
  return typeof seconds === 'number' && details.retryable !== false ? { [RETRY_AFTER]: String(seconds) } : {};
}

/** The header retryAfterHeader sets; the OpenAPI document names it for the codes that may carry it. */
export const RETRY_AFTER = 'retry-after';

/** Whether an error of `code` may carry Retry-After: a retryable refusal of a slot, a window or a store (a 500 or 504 does not). */
export function mayRetryAfter(code: ErrorCode): boolean {
  const { retryable, status } = CATALOGUE[code];
  return retryable !== false && status !== 500 && status !== 504;
}

export class ServiceError extends Error {
  readonly status: number;
  /** Response headers the error implies: Retry-After from the body, and any the throw site adds (Allow, Content-Range). */
  readonly headers: ErrorHeaders;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    headers: ErrorHeaders = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = CATALOGUE[code].status;
    this.headers = { ...headers, ...retryAfterHeader(details) };
  }

  /** The JSON body every adapter sends: `{error, message, ...details}`. */
  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }

  /** The same error with more body fields (such as a compile failure's `usage`). */
  withDetails(extra: ErrorDetails): ServiceError {
    return new ServiceError(this.code, this.message, { ...this.details, ...extra }, this.headers);
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** Codes built by a factory; validation_failed is built by validationFailed()/invalidField() only. */
export type FactoryCode = Exclude<ErrorCode, 'validation_failed'>;

/** A factory: the message defaults to the catalogue's; details are optional only when every field is. */
type Factory<D> = D extends NoDetails
  ? (message?: string, details?: D, headers?: ErrorHeaders) => ServiceError
  : Partial<D> extends D
    ? (message?: string, details?: D, headers?: ErrorHeaders) => ServiceError
    : (message: string | undefined, details: D, headers?: ErrorHeaders) => ServiceError;

/** The error `code` with its body fields; for a code chosen at run time (the literal factories read better). */
export function fail<C extends FactoryCode>(code: C, message: string | undefined, details: DetailsOf<C>, headers?: ErrorHeaders): ServiceError {
  return new ServiceError(code, message ?? CATALOGUE[code].message, details as ErrorDetails, headers);
}

/** Typed factories, one per code: `errors.compilation_timeout(message, {timeout_seconds, plan, …})`. */
export const errors = Object.fromEntries(
  ERROR_CODES.filter((code) => code !== 'validation_failed').map((code) => [
    code,
    (message?: string, details: ErrorDetails = {}, headers?: ErrorHeaders) => new ServiceError(code, message ?? CATALOGUE[code].message, details, headers),
  ]),
) as unknown as { readonly [C in FactoryCode]: Factory<DetailsOf<C>> };

/** Codes whose body says when to retry (`retryable`, `retry_after_seconds`): the refusals of a slot or window. */
export type RetryCode = { [C in FactoryCode]: DetailsOf<C> extends RetryLater ? C : never }[FactoryCode];

/** A refusal of `code` before its retry fields are known: its message and its other body fields. */
export type Refusal = {
  [C in RetryCode]: { code: C; message: string; details?: Omit<DetailsOf<C>, keyof RetryLater>; retryable: boolean };
}[RetryCode];

/** The error of `refusal` retried after `retryAfterSeconds` (Retry-After follows when retryable). */
export function refused(refusal: Refusal, retryAfterSeconds: number): ServiceError {
  const { code, message, details = {}, retryable } = refusal;
  return new ServiceError(code, message, { ...details, retryable, retry_after_seconds: retryAfterSeconds });
}

/**
 * An error read back from where it was kept as data (a remote worker's answer, a render
 * worker's reply, a stored idempotent response): its fields are whatever that side sent.
 */
export function restore(code: ErrorCode, message: string, details: ErrorDetails): ServiceError {
  return new ServiceError(code, message, details);
}

/**
 * 422 validation_failed, the one place its body is built: `fields` names every broken rule, and
 * the message sums them up (`Request is invalid: latex must be a string; …`) unless a clearer
 * sentence is given.
 */
export function validationFailed(fields: FieldError[], options: { lead?: string; message?: string } = {}): ServiceError {
  const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
  return new ServiceError('validation_failed', options.message ?? `${options.lead ?? 'Request is invalid'}: ${summary}`, { fields });
}

/** validation_failed for one broken rule. */
export function invalidField(field: string, rule: string, message: string, options: { lead?: string; message?: string } = {}): ServiceError {
  return validationFailed([{ field, rule, message }], options);
}

/** The body of an unexpected failure: nothing internal leaks to the caller. */
export const INTERNAL_ERROR_BODY = { error: 'internal_error', message: CATALOGUE.internal_error.message } as const;
