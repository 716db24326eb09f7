// GET /api/v1/jobs/{job_id} (an async job, for its own account only) and
// POST /api/v2/templates/{id}/render_batch (always async): docs/async-and-webhooks.md.
import { Type } from '@sinclair/typebox';
import { BATCH_MAX_ITEMS, runBatch } from '../jobs/batch.js';
import type { Services } from '../services.js';
import { AcceptedBody, JobBody } from '../jobs/schemas.js';
import { accountOf, callerOf } from './auth.js';
import { errors, IdParam } from '../wire/schemas.js';
import type { App } from './types.js';

const BatchBody = Type.Object(
  {
    items: Type.Array(Type.Unknown(), { minItems: 1, maxItems: BATCH_MAX_ITEMS, description: `The data of each render (1 to ${BATCH_MAX_ITEMS})` }),
    merge: Type.Optional(Type.Boolean({ description: 'Also join the successful PDFs into one (qpdf)' })),
    callback_url: Type.Optional(Type.String({ description: 'Webhook receiver (https)' })),
  },
  { additionalProperties: false },
);

export function jobRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/jobs/:job_id',
    {
      config: { auth: 'required' },
      schema: {
        summary: 'Read an async job: status, then the result or error body of the synchronous call',
        tags: ['jobs'],
        params: Type.Object({ job_id: Type.String({ maxLength: 64 }) }),
        response: { 200: JobBody, ...errors(401, 404) },
      },
    },
    async (req, reply) => reply.header('cache-control', 'no-store').send(await services.asyncJobs.get(callerOf(req), req.params.job_id)),
  );

  app.post(
    '/api/v2/templates/:id/render_batch',
    {
      config: { auth: 'paid' },
      schema: {
        summary: 'Render a placeholder template once per item, as one async job',
        description: `Up to ${BATCH_MAX_ITEMS} items; each is validated, rendered and charged on its own, and its entry in the result is its CompileSuccess or its error body. merge: true also returns one merged PDF.`,
        tags: ['templates v2', 'jobs'],
        params: IdParam,
        body: BatchBody,
        response: { 202: AcceptedBody, ...errors(401, 403, 404, 422) },
      },
    },
    async (req, reply) => {
      const caller = accountOf(req);
      const { items, merge, callback_url } = req.body;
      // Refusals that concern the whole batch come now: unknown template, raw (V1) template.
      const template = await services.templates.getV2(caller, req.params.id);
      const deps = { config: services.config, clock: services.clock, log: services.log, pdfs: services.pdfs, blobs: services.blobs };
      const accepted = await services.asyncJobs.startQueued(caller, { kind: 'render_batch', callbackUrl: callback_url }, async () => ({
        template_id: template.template.id,
        ...(await runBatch(deps, caller, items, merge === true, (data) => services.templates.render(caller, String(template.template.id), data))),
      }));
      return reply.code(202).header('location', accepted.status_url).send(accepted);
    },
  );
}
