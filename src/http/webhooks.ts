// The account's webhook signing secret: read it, rotate it (deliveries after a rotation,
// retries included, are signed with the new one).
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { accountOf } from './auth.js';
import type { App } from './types.js';

const SecretBody = Type.Object({ secret: Type.String({ pattern: '^whsec_', description: 'Standard Webhooks secret; the HMAC key is the base64 after whsec_' }) });

export function webhookRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/webhooks/secret',
    {
      config: { auth: 'required' },
      schema: { operationId: 'getWebhookSecret', summary: 'The webhook signing secret of this account', tags: ['jobs'], response: { 200: SecretBody } },
    },
    async (req, reply) => reply.header('cache-control', 'no-store').send({ secret: await services.webhookSecrets.get(accountOf(req).account.id) }),
  );

  app.post(
    '/api/v1/webhooks/secret/rotate',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Issue a new webhook signing secret (the old one stops at once)',
        tags: ['jobs'],
        response: { 200: SecretBody },
      },
    },
    async (req, reply) => reply.header('cache-control', 'no-store').send({ secret: await services.webhookSecrets.rotate(accountOf(req).account.id) }),
  );
}
