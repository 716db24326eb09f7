// The error catalogue: every code the service sends, with its HTTP status (SPEC §7).
// Services throw ServiceError; HTTP and MCP adapters turn it into their wire shape.

export const ERROR_STATUS = {
  // HTTP conventions
  not_found: 404,
  invalid_json: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  validation_failed: 422,
  method_not_allowed: 405,
  internal_error: 500,
  server_busy: 503,
  // Refused at the edge, before routing or parsing finished (docs/http-hardening.md)
  bad_request: 400,
  json_too_deep: 400,
  request_timeout: 408,
  uri_too_long: 414,
  headers_too_large: 431,
  origin_not_allowed: 403,
  // Shared infrastructure down or full (retryable; see docs/storage-and-faults.md)
  database_unavailable: 503,
  redis_unavailable: 503,
  storage_unavailable: 503,
  storage_full: 507,
  // Authentication
  missing_api_key: 401,
  invalid_api_key: 401,
  // Compile and render (§7.1)
  compiler_not_available: 403,
  assets_not_allowed: 403,
  plan_required: 403,
  latex_too_large: 413,
  assets_too_large: 413,
  storage_quota_exceeded: 413,
  data_too_large: 413,
  not_latex_source: 422,
  compilation_failed: 422,
  compilation_timeout: 422,
  page_limit_exceeded: 422,
  pdf_too_large: 422,
  pdf_size_unknown: 422,
  pdf_active_content: 422,
  assets_not_available_anonymously: 422,
  too_many_assets: 422,
  invalid_asset_filename: 422,
  invalid_asset_format: 422,
  invalid_asset_encoding: 422,
  asset_not_found: 422,
  asset_name_collision: 422,
  invalid_stored_assets_shape: 422,
  schema_validation_failed: 422,
  invalid_data: 422,
  invalid_color: 422,
  invalid_data_shape: 422,
  template_engine_mismatch: 422,
  render_parse_failed: 422,
  render_failed: 422,
  render_asset_not_found: 422,
  template_not_found: 404,
  rate_limit: 429,
  rate_limit_exceeded: 429,
  render_rate_limited: 429,
  anonymous_quota_exhausted: 429,
  preview_in_progress: 429,
  anonymous_capacity_exhausted: 503,
  preview_unavailable: 503,
  render_total_timeout: 504,
  asset_storage_error: 500,
  // Templates and stored assets (§7.2)
  liquid_placeholders_in_v1_template: 422,
  liquid_syntax_error: 422,
  template_security_violation: 422,
  engine_downgrade_not_supported: 422,
  invalid_placeholder_engine: 422,
  already_v2: 422,
  name_taken: 422,
  template_limit_reached: 403,
  asset_limit_reached: 403,
  // Signed PDF links
  invalid_signature: 403,
  link_expired: 410,
  range_not_satisfiable: 416,
  // Sign-up
  signup_closed: 403,
  email_taken: 409,
  // Async jobs, webhooks and idempotency keys (extension, docs/async-and-webhooks.md)
  async_not_available_anonymously: 422,
  invalid_callback_url: 422,
  job_not_found: 404,
  job_interrupted: 503,
  invalid_idempotency_key: 422,
  idempotency_key_reused: 422,
  idempotency_key_in_progress: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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

/** One broken field rule in the `fields` list of a `validation_failed` body. */
export interface FieldError {
  field: string;
  rule: string;
  limit?: number;
  message: string;
}

/** Extra body fields an error carries next to `error` and `message`. */
export type ErrorDetails = Record<string, unknown>;

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    /** Response headers the error implies, such as Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_STATUS[code];
  }

  /** The JSON body every adapter sends: `{error, message, ...details}`. */
  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** The body of an unexpected failure: nothing internal leaks to the caller. */
export const INTERNAL_ERROR_BODY = { error: 'internal_error', message: 'Something went wrong on our side; retry later.' } as const;
