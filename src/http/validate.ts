// POST /api/v1/validate and POST /api/v2/templates/{id}/validate: free checks before a compile
// or a render (docs/api.md, "Validate"). Rules live in ValidateService and TemplateValidateService.
import { TemplateValidateBody, ValidateBody, ValidateResponse } from '../compile/validate-schemas.js';
import type { Services } from '../services.js';
import { accountOf, callerOf } from './auth.js';
import { COMPILE_ASSET_NAMES } from '../wire/json-safety.js';
import { IdParam } from '../wire/schemas.js';
import type { App } from './types.js';

export function validateRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/validate',
    {
      config: { auth: 'optional', assetNames: COMPILE_ASSET_NAMES, errors: ['validation_failed', 'latex_too_large', 'validate_rate_limited', 'too_many_concurrent_compiles', 'failure_budget_exhausted', 'redis_unavailable', 'server_busy'] },
      schema: {
        operationId: 'validate',
        summary: 'Check a compile request without compiling and without charging',
        description:
          'Takes the compile request body. Answers 200 with `findings`: the request and plan checks the compile would refuse (with their error codes), the template security policy (with `placeholder_engine: "liquid"`), chktex warnings with line numbers, classes and packages not installed here with the closest installed names, and files read by \\input, \\include, \\includegraphics or a bibliography that the request does not carry. Free; `QUIRE_VALIDATE_PER_MINUTE` calls per minute per caller.',
        tags: ['compile'],
        body: ValidateBody,
        response: { 200: ValidateResponse },
      },
    },
    async (req) => services.validate.validate(callerOf(req), req.body),
  );

  app.post(
    '/api/v2/templates/:id/validate',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'template_version_not_found', 'validate_rate_limited', 'redis_unavailable'] },
      schema: {
        operationId: 'validateTemplateData',
        summary: 'Check render data against a placeholder template schema without rendering',
        description: '`data` is checked against the schema of the latest version (or `version`) as render checks it. Free; shares the validate rate limit.',
        tags: ['templates v2'],
        params: IdParam,
        body: TemplateValidateBody,
        response: { 200: ValidateResponse },
      },
    },
    async (req) => services.templateValidate.validate(accountOf(req), req.params.id, req.body),
  );
}
