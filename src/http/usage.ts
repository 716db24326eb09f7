// GET /api/v1/usage: the account's plan, counters and limits (the Usage object of SPEC §2.8).
import { UsageBody } from '../accounts/schemas.js';
import type { Services } from '../services.js';
import { accountOf } from './auth.js';
import type { App } from './types.js';

export function usageRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/usage',
    {
      config: { auth: 'required', errors: ['redis_unavailable'] },
      schema: {
        operationId: 'getUsage',
        summary: "The account's plan, counters and limits",
        tags: ['account'],
        response: { 200: UsageBody },
      },
    },
    async (req) => services.usage.report(accountOf(req)),
  );
}
