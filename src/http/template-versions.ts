// /api/v2/templates/{id}/versions: the kept versions of a saved template (V1 or V2), one
// version's content, and restore (docs/api.md, "Template versions"). Rules live in the
// template services.
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { RestoreResponse, TemplateVersionListResponse, TemplateVersionResponse } from '../templates/version-schemas.js';
import { accountOf } from './auth.js';
import { IdParam } from '../wire/schemas.js';
import type { App } from './types.js';

// Path parameters arrive as text: a version is a positive whole number of at most 9 digits.
const VersionParams = Type.Object({ ...IdParam.properties, version: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'A kept version (1, 2, …)' }) });

export function templateVersionRoutes(app: App, services: Services): void {
  const versions = services.templateVersions;

  app.get(
    '/api/v2/templates/:id/versions',
    {
      config: { auth: 'paid', errors: ['template_not_found'] },
      schema: {
        operationId: 'listTemplateVersions',
        summary: "List a template's kept versions, newest first",
        description: 'Every saved source of a template (raw or placeholder) is a version; the plan keeps the newest `kept_limit` of them.',
        tags: ['templates v2'],
        params: IdParam,
        response: { 200: TemplateVersionListResponse },
      },
    },
    async (req) => versions.list(accountOf(req), req.params.id),
  );

  app.get(
    '/api/v2/templates/:id/versions/:version',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'template_version_not_found'] },
      schema: {
        operationId: 'getTemplateVersion',
        summary: 'Fetch one kept version with its source, instructions, schema and sample data',
        tags: ['templates v2'],
        params: VersionParams,
        response: { 200: TemplateVersionResponse },
      },
    },
    async (req) => versions.get(accountOf(req), req.params.id, Number(req.params.version)),
  );

  app.post(
    '/api/v2/templates/:id/versions/:version/restore',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'template_version_not_found', 'template_security_violation', 'liquid_syntax_error'] },
      schema: {
        operationId: 'restoreTemplateVersion',
        summary: 'Make a kept version the new latest version',
        description: "The version's source and instructions become a new version (latest + 1); the template keeps its kind, name and description.",
        tags: ['templates v2'],
        params: VersionParams,
        response: { 200: RestoreResponse },
      },
    },
    async (req) => versions.restore(accountOf(req), req.params.id, Number(req.params.version)),
  );
}
