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
  not_latex_source: 422,
  compilation_failed: 422,
  compilation_timeout: 422,
  page_limit_exceeded: 422,
  pdf_too_large: 422,
  pdf_size_unknown: 422,
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
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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
