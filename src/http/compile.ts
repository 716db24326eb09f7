// POST /api/v1/compile: parse, call the compile service, send its result.
import { anonymousTierPhrase } from '../quota/prose.js';
import { CompileFailureBody, CompileRequestBody, CompileSuccessBody } from '../compile/schemas.js';
import type { Services } from '../services.js';
import { AcceptedResponse, answer, asyncOf } from './async.js';
import { callerOf } from './auth.js';
import { compileSuccessResponse, inlinePdf } from './inline-pdf.js';
import { COMPILE_ASSET_NAMES } from '../wire/json-safety.js';
import type { App } from './types.js';
import type { ErrorCode } from '../errors.js';

/** What the compile service can refuse: its checks, the asset resolver, quota and the TeX run. */
export const COMPILE_ERRORS: readonly ErrorCode[] = [
  'texlive_not_available', 'not_latex_source', 'latex_too_large', 'compiler_not_available', 'compilation_failed', 'compilation_timeout', 'page_limit_exceeded',
  'pdf_too_large', 'pdf_size_unknown', 'pdf_active_content', 'pdf_standard_failed', 'output_failed', 'server_busy', 'preview_in_progress', 'preview_unavailable',
  'assets_not_allowed', 'plan_required', 'assets_not_available_anonymously', 'assets_too_large', 'too_many_assets', 'invalid_asset_filename',
  'invalid_asset_format', 'invalid_asset_encoding', 'invalid_stored_assets_shape', 'asset_not_found', 'asset_name_collision',
  'asset_storage_error', 'anonymous_quota_exhausted', 'anonymous_capacity_exhausted', 'rate_limit',
  'too_many_concurrent_compiles', 'failure_budget_exhausted',
  'storage_unavailable', 'storage_full', 'redis_unavailable',
  // output.sign (src/signing/, docs/pdf-output.md#signatures)
  'invalid_pkcs12', 'pkcs12_password_incorrect', 'signing_certificate_not_valid', 'signing_identity_not_found', 'timestamp_not_configured', 'timestamp_failed',
  // output.tagged and PDF/UA standards (docs/pdf-output.md#tagged-accessible-pdf-pdfua)
  'tagging_unsupported_engine',
];

/** What the async door (async.ts) and the job service add when `async: true`. */
export const ASYNC_ERRORS: readonly ErrorCode[] = ['async_not_available_anonymously', 'invalid_callback_url'];

export function compileRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/compile',
    {
      config: { auth: 'optional', assetNames: COMPILE_ASSET_NAMES, errors: [...COMPILE_ERRORS, 'invalid_project_zip', ...ASYNC_ERRORS] },
      schema: {
        operationId: 'compile',
        summary: 'Compile LaTeX source into a PDF',
        description:
          `Returns a signed pdf_url (extension: with Accept: application/pdf, the PDF itself). Without credentials the anonymous tier applies (${anonymousTierPhrase()}). Failed or refused compiles cost no quota.`,
        tags: ['compile'],
        body: CompileRequestBody,
        response: { 200: compileSuccessResponse(CompileSuccessBody), 202: AcceptedResponse, 422: CompileFailureBody },
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const { request, rest } = asyncOf(req.body);
      const answered = await answer(services, reply, caller, 'compile', request, (hooks) => services.compile.compile(caller, rest, { via: 'compile', ...hooks }));
      // Extension: `Accept: application/pdf` gets the PDF itself (src/http/inline-pdf.ts).
      return reply.sent ? answered : inlinePdf(services, reply, req.headers.accept, answered);
    },
  );
}
