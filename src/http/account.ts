// Self-service account routes: sign-up (when the operator opened it) and key rotation.
import { RotateResponse, SignupRequest, SignupResponse } from '../accounts/schemas.js';
import type { Services } from '../services.js';
import { accountOf } from './auth.js';
import type { App } from './types.js';

export function accountRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/signup',
    {
      config: { errors: ['signup_closed', 'email_taken', 'rate_limit', 'database_unavailable', 'redis_unavailable'] },
      schema: {
        operationId: 'signUp',
        summary: 'Create a Free account and its API key (only when QUIRE_SIGNUP=open)',
        tags: ['account'],
        body: SignupRequest,
        response: { 201: SignupResponse },
      },
    },
    async (req, reply) => {
      const result = await services.signup.signup({ email: req.body.email, ip: req.ip });
      return reply.code(201).header('cache-control', 'no-store').send(result);
    },
  );

  app.post(
    '/api/v1/api_key/rotate',
    {
      config: { auth: 'required' },
      schema: {
        operationId: 'rotateApiKey',
        summary: 'Issue a new API key and revoke the current one',
        description: 'Templates and assets belong to the account and survive rotation.',
        tags: ['account'],
        response: { 200: RotateResponse },
      },
    },
    async (req, reply) => {
      const { account } = accountOf(req);
      const apiKey = await services.accounts.rotateKey(account.id);
      const key = await services.accounts.activeKey(account.id);
      if (!key) throw new Error('a key issued a moment ago is not active');
      return reply.header('cache-control', 'no-store').send({ api_key: apiKey, prefix: key.prefix, created_at: key.created_at });
    },
  );
}
