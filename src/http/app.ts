// The HTTP door: Fastify with TypeBox schemas, JSON errors, OpenAPI from the routes.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import type { Services } from '../services.js';
import { API_VERSION } from '../version.js';
import { assetRoutes } from './assets.js';
import { installAuth } from './auth.js';
import { installCors } from './cors.js';
import { compileRoutes } from './compile.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { galleryRoutes } from './gallery.js';
import { clientErrorHandler, frameworkErrors, installHardening } from './hardening.js';
import { mcpRoutes } from './mcp.js';
import { metaRoutes } from './meta.js';
import { pdfRoutes } from './pdfs.js';
import { templateRoutes } from './templates.js';
import { templateVersionRoutes } from './template-versions.js';
import { validateRoutes } from './validate.js';
import { pdfCheckRoutes } from './pdf-check.js';
import type { App } from './types.js';
import { usageRoutes } from './usage.js';
import { webRoutes } from './web.js';
import { accountRoutes } from './account.js';
import { installIdempotency } from './idempotency.js';
import { jobRoutes } from './jobs.js';
import { webhookRoutes } from './webhooks.js';
import { signingIdentityRoutes } from './signing-identities.js';
import { DOCUMENTED, documentedTypes } from '../documented.js';
import { installOperationDocs } from './operations.js';
import type { RpcEndpoint } from '../wire/rpc-endpoint.js';

/** What the HTTP door carries for the other doors: the MCP server answers /mcp's bodies. */
export interface OtherDoors {
  mcp: RpcEndpoint;
}

/** Route modules, each `(app, services) => void`. Add a domain's routes here. */
function routes(doors: OtherDoors): Array<(app: App, services: Services) => void> {
  const mcp = (app: App, services: Services) => mcpRoutes(app, services, doors.mcp);
  return [metaRoutes, usageRoutes, compileRoutes, pdfRoutes, accountRoutes, webRoutes, mcp, assetRoutes, templateRoutes, templateVersionRoutes, validateRoutes, pdfCheckRoutes, galleryRoutes, jobRoutes, webhookRoutes, signingIdentityRoutes];
}

/** The HTTP door alone; src/app.ts assembles it with the MCP door (`buildApp`). */
export async function buildHttpApp(services: Services, doors: OtherDoors): Promise<App> {
  const app = Fastify({
    loggerInstance: services.log,
    trustProxy: services.config.trustProxy,
    bodyLimit: services.config.bodyLimit,
    genReqId: () => randomUUID(),
    frameworkErrors,
    clientErrorHandler,
    ajv: {
      // Bodies are taken as sent: no type coercion, no silent removal; report every problem.
      // DOCUMENTED annotates a field the service checks itself with its type (documented.ts).
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true, keywords: [DOCUMENTED] },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Response schemas document the API; bodies are serialised whole so no field is ever dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
  installHardening(app);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    services.metrics.httpRequests.inc({ method: req.method, route, status: String(reply.statusCode) });
    services.metrics.httpDuration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Quire',
        version: API_VERSION,
        description:
          'Compile LaTeX into PDF over HTTP: templates, assets, a public gallery and an MCP endpoint. Every error is JSON `{error, message, ...}` with a code of docs/errors.md.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'meta', description: 'Health of the service' },
        { name: 'compile', description: 'LaTeX to PDF, and the signed PDF download' },
        { name: 'account', description: 'Sign-up, API key and usage' },
        { name: 'assets', description: 'The stored asset library (paid plans)' },
        { name: 'templates', description: 'V1 saved templates (raw LaTeX or promoted)' },
        { name: 'templates v2', description: 'Placeholder (Liquid) templates: create, render, batch' },
        { name: 'gallery', description: 'The public template gallery (no key needed)' },
        { name: 'jobs', description: 'Async jobs and the webhook signing secret' },
        { name: 'signing', description: 'Stored PKCS#12 signing identities for output.sign (paid plans)' },
        { name: 'mcp', description: 'The MCP endpoint (JSON-RPC 2.0)' },
      ],
      servers: [{ url: services.config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    transformObject: (documents) =>
      'openapiObject' in documents ? documentedTypes(markOptionalBodies(documents.openapiObject)) : documents.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  installCors(app, services.config);
  installOperationDocs(app);
  installAuth(app, services);
  installIdempotency(app, services);

  for (const register of routes(doors)) register(app, services);
  return app;
}

/**
 * @fastify/swagger marks every request body required; a route whose body may be left out
 * (promote) says so with `x-body-optional: true` in its schema.
 */
function markOptionalBodies<T extends { paths?: object }>(doc: T): T {
  for (const path of Object.values(doc.paths ?? {}) as Array<Record<string, Record<string, unknown>>>) {
    for (const operation of Object.values(path)) {
      if (!operation['x-body-optional']) continue;
      delete operation['x-body-optional'];
      (operation.requestBody as { required?: boolean }).required = false;
    }
  }
  return doc;
}
