// /api/v1/templates (raw and promoted templates) and /api/v2/templates (placeholder templates,
// promote, render): SPEC §3, §4.4, §4.5. Rules live in TemplateService.
import type { Services } from '../services.js';
import {
  CreateV2Body,
  PatchV2Body,
  PromoteBody,
  PromoteResponse,
  RenderBody,
  RenderSuccessBody,
  SaveTemplateBody,
  SaveTemplateResponse,
  TemplateListResponse,
  TemplateV1Response,
  TemplateV2Response,
} from '../templates/schemas.js';
import { AcceptedResponse, answer, asyncOf } from './async.js';
import { accountOf } from './auth.js';
import { ASYNC_ERRORS, COMPILE_ERRORS } from './compile.js';
import { IdParam } from '../wire/schemas.js';
import type { App } from './types.js';
import type { ErrorCode } from '../errors.js';

const Deleted = { 204: { type: 'null', description: 'Deleted' } };

/** A source the template service checks before storing it (size, Liquid, security policy), and a stored TeX Live year it does not serve. */
const SOURCE_ERRORS: ErrorCode[] = ['latex_too_large', 'liquid_syntax_error', 'template_security_violation', 'name_taken', 'texlive_not_available'];
/** What rendering a placeholder template adds to the compile's own refusals. */
export const RENDER_ERRORS: readonly ErrorCode[] = [
  'template_not_found', 'template_engine_mismatch', 'invalid_data_shape', 'schema_validation_failed', 'data_too_large',
  'render_failed', 'render_parse_failed', 'render_asset_not_found', 'render_rate_limited', 'render_total_timeout',
];
export function templateRoutes(app: App, services: Services): void {
  const templates = services.templates;

  app.post(
    '/api/v1/templates',
    {
      config: {
        auth: 'paid',
        errors: [...SOURCE_ERRORS, 'template_limit_reached', 'liquid_placeholders_in_v1_template', 'invalid_placeholder_engine', 'engine_downgrade_not_supported'],
      },
      schema: {
        operationId: 'saveTemplate',
        summary: 'Save a template (upsert by name)',
        description:
          '201 for a new name, 200 for an update. `placeholder_engine: liquid` stores or promotes a placeholder template (`promoted: true`); `none` stores raw LaTeX. Paid plans.',
        tags: ['templates'],
        body: SaveTemplateBody,
        response: { 200: SaveTemplateResponse, 201: SaveTemplateResponse },
      },
    },
    async (req, reply) => {
      const result = await templates.saveV1(accountOf(req), req.body);
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.get(
    '/api/v1/templates',
    {
      config: { auth: 'paid' },
      schema: {
        operationId: 'listTemplates',
        summary: "List the account's templates (without source and instructions)",
        tags: ['templates'],
        response: { 200: TemplateListResponse },
      },
    },
    async (req) => templates.list(accountOf(req)),
  );

  app.get(
    '/api/v1/templates/:id',
    {
      config: { auth: 'paid', errors: ['template_not_found'] },
      schema: {
        operationId: 'getTemplate',
        summary: 'Fetch one template with its source and instructions',
        tags: ['templates'],
        params: IdParam,
        response: { 200: TemplateV1Response },
      },
    },
    async (req) => templates.getV1(accountOf(req), req.params.id),
  );

  // V1 and V2 delete are one operation: a template of either kind goes, 204.
  for (const [path, tag, operationId] of [
    ['/api/v1/templates/:id', 'templates', 'deleteTemplate'],
    ['/api/v2/templates/:id', 'templates v2', 'deleteTemplateV2'],
  ] as const) {
    app.delete(
      path,
      {
        config: { auth: 'paid', errors: ['template_not_found'] },
        schema: {
          operationId,
          summary: 'Delete a template',
          tags: [tag],
          params: IdParam,
          response: Deleted,
        },
      },
      async (req, reply) => {
        await templates.delete(accountOf(req), req.params.id);
        return reply.code(204).send();
      },
    );
  }

  app.post(
    '/api/v2/templates',
    {
      config: { auth: 'paid', errors: [...SOURCE_ERRORS, 'template_limit_reached'] },
      schema: {
        operationId: 'createTemplateV2',
        summary: 'Create a placeholder (Liquid) template',
        description: 'The source must pass the 14-rule security policy and parse as Liquid. Returns the derived `schema` and `sample_data`.',
        tags: ['templates v2'],
        body: CreateV2Body,
        response: { 201: TemplateV2Response },
      },
    },
    async (req, reply) => reply.code(201).send(await templates.createV2(accountOf(req), req.body)),
  );

  app.get(
    '/api/v2/templates',
    {
      config: { auth: 'paid' },
      schema: {
        operationId: 'listTemplatesV2',
        summary: "List the account's placeholder templates",
        tags: ['templates v2'],
        response: { 200: TemplateListResponse },
      },
    },
    async (req) => templates.list(accountOf(req), 'liquid'),
  );

  app.get(
    '/api/v2/templates/:id',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'template_engine_mismatch'] },
      schema: {
        operationId: 'getTemplateV2',
        summary: 'Fetch one placeholder template with its schema and sample data',
        tags: ['templates v2'],
        params: IdParam,
        response: { 200: TemplateV2Response },
      },
    },
    async (req) => templates.getV2(accountOf(req), req.params.id),
  );

  app.patch(
    '/api/v2/templates/:id',
    {
      config: { auth: 'paid', errors: [...SOURCE_ERRORS, 'template_not_found', 'template_engine_mismatch'] },
      schema: {
        operationId: 'updateTemplateV2',
        summary: 'Change a placeholder template',
        description: 'A new `latex_with_placeholders` re-derives the schema and increments `version`; other fields do not.',
        tags: ['templates v2'],
        params: IdParam,
        body: PatchV2Body,
        response: { 200: TemplateV2Response },
      },
    },
    async (req) => templates.patchV2(accountOf(req), req.params.id, req.body),
  );

  app.post(
    '/api/v2/templates/:id/promote',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'already_v2', 'latex_too_large', 'liquid_syntax_error', 'template_security_violation'] },
      schema: {
        operationId: 'promoteTemplate',
        summary: 'Turn a raw template into a placeholder template',
        description: 'Id, name, instructions and creation date are kept.',
        tags: ['templates v2'],
        params: IdParam,
        // The body is optional: only a JSON body is checked here; a request without one
        // promotes the saved source (the service reads an absent body as {}).
        body: { content: { 'application/json': { schema: PromoteBody } } },
        'x-body-optional': true,
        response: { 200: PromoteResponse },
      },
    },
    async (req) => templates.promote(accountOf(req), req.params.id, req.body),
  );

  app.post(
    '/api/v2/templates/:id/render',
    {
      config: { auth: 'paid', errors: [...RENDER_ERRORS, ...COMPILE_ERRORS, ...ASYNC_ERRORS] },
      schema: {
        operationId: 'renderTemplate',
        summary: 'Render a placeholder template with data into a PDF',
        description:
          "`data` is validated against the template schema first (no quota on failure). `version` renders a kept version (default: the latest). `output` shapes the PDF as on compile (docs/pdf-output.md). `texlive` picks the TeX Live year (default: the template's stored `texlive`, else the newest); a year not served is 422 texlive_not_available, not charged. `on_error: \"continue\"` delivers a PDF TeX wrote despite recoverable errors, with `errors` (as on compile). The compiler is chosen from the rendered source. Counts toward the monthly cap; 60 s wall clock.",
        tags: ['templates v2'],
        params: IdParam,
        body: RenderBody,
        response: { 200: RenderSuccessBody, 202: AcceptedResponse },
      },
    },
    async (req, reply) => {
      const caller = accountOf(req);
      const { request } = asyncOf(req.body);
      return answer(services, reply, caller, 'render', request, (hooks) =>
        templates.render(caller, req.params.id, req.body.data, hooks, { version: req.body.version, output: req.body.output, texlive: req.body.texlive, onError: req.body.on_error }),
      );
    },
  );
}
