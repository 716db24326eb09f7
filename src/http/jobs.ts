// GET /api/v1/jobs/{job_id} (an async job, for its own account only) and
// POST /api/v2/templates/{id}/render_batch (always async): docs/async-and-webhooks.md.
import { Type } from '@sinclair/typebox';
import { checkedByService } from '../documented.js';
import { OutputBody } from '../compile/output-schema.js';
import { OnErrorField, texliveField } from '../compile/schemas.js';
import type { Services } from '../services.js';
import { JobBody } from '../jobs/schemas.js';
import { BATCH_MAX_ITEMS } from '../templates/batch.js';
import { accountOf, callerOf } from './auth.js';
import { AcceptedResponse } from './async.js';
import { IdParam } from '../wire/schemas.js';
import type { App } from './types.js';

const BatchBody = Type.Object(
  {
    // An item that is not an object fails alone (invalid_data_shape in its entry), not the batch.
    items: Type.Array(checkedByService(Type.Record(Type.String(), Type.Unknown(), { description: 'The data of one render, as `data` of a render' })), { minItems: 1, maxItems: BATCH_MAX_ITEMS, description: `The data of each render (1 to ${BATCH_MAX_ITEMS})` }),
    merge: Type.Optional(Type.Boolean({ description: 'Also join the successful PDFs into one (qpdf)' })),
    callback_url: Type.Optional(Type.String({ description: 'Webhook receiver (https)' })),
    output: Type.Optional(OutputBody),
    outputs: Type.Optional(
      Type.Array(OutputBody, {
        maxItems: BATCH_MAX_ITEMS,
        description: "Per item, by position: that item's `output` fields, each replacing the batch's field of the same name ({}: the batch's `output` as it is)",
      }),
    ),
    texlive: texliveField("the template's stored `texlive`, else the newest; every item runs with it"),
    on_error: OnErrorField,
  },
  { additionalProperties: false, examples: [{ items: [{ name: 'Ada' }, { name: 'Grace' }], merge: true }] },
);

export function jobRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/jobs/:job_id',
    {
      config: { auth: 'required', errors: ['job_not_found'] },
      schema: {
        operationId: 'getJob',
        summary: 'Read an async job: status, then the result or error body of the synchronous call',
        tags: ['jobs'],
        params: Type.Object({ job_id: Type.String({ maxLength: 64 }) }),
        response: { 200: JobBody },
      },
    },
    async (req, reply) => reply.header('cache-control', 'no-store').send(await services.asyncJobs.get(callerOf(req), req.params.job_id)),
  );

  app.post(
    '/api/v2/templates/:id/render_batch',
    {
      config: { auth: 'paid', errors: ['template_not_found', 'template_engine_mismatch', 'invalid_callback_url', 'texlive_not_available'] },
      schema: {
        operationId: 'renderTemplateBatch',
        summary: 'Render a placeholder template once per item, as one async job',
        description: `Up to ${BATCH_MAX_ITEMS} items; each is validated, rendered and charged on its own, and its entry in the result is its CompileSuccess or its error body. merge: true also returns one merged PDF. \`output\` shapes every PDF as on compile; \`outputs[i]\` overrides its fields for item i. \`texlive\` (else the template's stored year, else the newest) is fixed for the whole batch when it is accepted: a year not served is 422 texlive_not_available at once. \`on_error\` applies to every item, as on compile.`,
        tags: ['templates v2', 'jobs'],
        params: IdParam,
        body: BatchBody,
        response: { 202: AcceptedResponse },
      },
    },
    async (req, reply) => {
      const { items, merge, callback_url, output, outputs, texlive, on_error: onError } = req.body;
      const accepted = await services.batches.start(accountOf(req), req.params.id, { items, merge, callbackUrl: callback_url, output, outputs, texlive, onError });
      return reply.code(202).header('location', accepted.status_url).send(accepted);
    },
  );
}
