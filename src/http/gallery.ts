// The public gallery door: JSON endpoints (no credentials; render takes an optional key),
// the preview images, and the server-rendered /gallery pages with their two static files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { projectRoot } from '../project-root.js';
import { GalleryDetailBody, GalleryListBody, PublicRenderRequest, PublicRenderSuccessBody, SlugParam } from '../gallery/schemas.js';
import type { Services } from '../services.js';
import { AcceptedResponse, answer, asyncOf } from './async.js';
import { callerOf } from './auth.js';
import { indexPage, notFoundPage, templatePage } from './pages/gallery.js';
import type { App } from './types.js';
import { ASYNC_ERRORS, COMPILE_ERRORS } from './compile.js';

const STATIC: Record<string, { type: string; body: Buffer }> = {};
function staticFile(name: string, type: string): { type: string; body: Buffer } {
  STATIC[name] ??= { type, body: readFileSync(join(projectRoot(), 'public', name)) };
  return STATIC[name];
}

const HTML = 'text/html; charset=utf-8';
const PreviewHeaders = {
  ETag: Type.String({ description: 'Send it back in If-None-Match to get 304' }),
  'Cache-Control': Type.Literal('public, max-age=86400'),
};
const PAGE_CACHE = 'public, max-age=300';

export function galleryRoutes(app: App, services: Services): void {
  const gallery = services.gallery;

  app.get(
    '/api/v1/public_templates',
    {
      schema: {
        operationId: 'listPublicTemplates',
        summary: 'List the public gallery templates',
        security: [],
        tags: ['gallery'],
        response: { 200: GalleryListBody },
      },
    },
    async () => ({ templates: gallery.list() }),
  );

  app.get(
    '/api/v1/public_templates/:slug',
    {
      config: { errors: ['not_found'] },
      schema: {
        operationId: 'getPublicTemplate',
        summary: 'One public template with its schema, sample data, instructions and source',
        tags: ['gallery'],
        params: SlugParam,
        response: { 200: GalleryDetailBody },
      },
    },
    async (req) => gallery.detail(req.params.slug),
  );

  app.post(
    '/api/v1/public_templates/:slug/render',
    {
      config: {
        auth: 'optional',
        errors: ['not_found', 'invalid_data', 'invalid_data_shape', 'schema_validation_failed', 'invalid_color', 'data_too_large', 'render_failed', 'render_total_timeout', ...COMPILE_ERRORS, ...ASYNC_ERRORS],
      },
      schema: {
        operationId: 'renderPublicTemplate',
        summary: 'Render a public template from JSON data into a PDF',
        description:
          'Validates `data` against the template schema before anything compiles (no quota on failure), then compiles exactly as POST /api/v1/compile: anonymous tier without a key, plan limits with one, `texlive` and `on_error` as on compile.',
        tags: ['gallery'],
        params: SlugParam,
        body: PublicRenderRequest,
        response: {
          200: PublicRenderSuccessBody,
          202: AcceptedResponse,
        },
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const { request, rest } = asyncOf(req.body);
      return answer(services, reply, caller, 'public_render', request, (hooks) => gallery.render(caller, req.params.slug, rest, hooks));
    },
  );

  app.get(
    '/api/v1/public_templates/:slug/preview.png',
    {
      config: { errors: ['not_found', 'server_busy', 'storage_unavailable', 'storage_full'] },
      schema: {
        operationId: 'getPublicTemplatePreview',
        summary: 'PNG of the first page (sample data, default color)',
        tags: ['gallery'],
        params: SlugParam,
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String({ description: 'The ETag of a copy you hold' })) }),
        response: {
          200: {
            description: 'The PNG',
            headers: PreviewHeaders,
            content: { 'image/png': { schema: Type.String({ format: 'binary', contentMediaType: 'image/png' }) } },
          },
          304: { type: 'null', description: 'Not modified (If-None-Match matched the ETag): no body, the copy you hold is current', headers: PreviewHeaders },
        },
      },
    },
    async (req, reply) => {
      const image = await gallery.preview(req.params.slug);
      void reply.header('etag', image.etag).header('cache-control', 'public, max-age=86400');
      // RFC 9110 §15.4.5: a 304 has no body and changes nothing a cache stores. send() without a
      // payload adds neither Content-Type nor Content-Length; send(null) would serialise "null" as JSON.
      if (req.headers['if-none-match'] === image.etag) return reply.code(304).send();
      return reply.type('image/png').send(image.png);
    },
  );

  const hidden = { schema: { hide: true } };
  app.get('/gallery', hidden, async (_req, reply) =>
    reply
      .type(HTML)
      .header('cache-control', PAGE_CACHE)
      .send(indexPage(gallery.templates, gallery.list(), services.config.baseUrl)),
  );
  app.get<{ Params: { slug: string } }>('/gallery/:slug', hidden, async (req, reply) => {
    const t = gallery.templates.find((candidate) => candidate.slug === req.params.slug);
    if (!t) return reply.code(404).type(HTML).send(notFoundPage(req.params.slug, services.config.baseUrl));
    const siblings = gallery.templates.filter((other) => other.document === t.document);
    return reply
      .type(HTML)
      .header('cache-control', PAGE_CACHE)
      .send(templatePage(t, gallery.entry(t), siblings));
  });
  app.get('/gallery/static/gallery.css', hidden, async (_req, reply) => {
    const file = staticFile('gallery.css', 'text/css; charset=utf-8');
    return reply.type(file.type).header('cache-control', PAGE_CACHE).send(file.body);
  });
  app.get('/gallery/static/gallery.js', hidden, async (_req, reply) => {
    const file = staticFile('gallery.js', 'text/javascript; charset=utf-8');
    return reply.type(file.type).header('cache-control', PAGE_CACHE).send(file.body);
  });
}
