import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { accountOf } from './auth.js';
import { errors } from './schemas.js';
import type { App } from './types.js';

const Int = Type.Integer();
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

export const UsageBody = Type.Object({
  user: Type.Object({ email: Type.String(), plan: Type.String() }),
  usage: Type.Object({
    monthly_limit: Int,
    used_this_month: Type.Integer({ description: 'Charged compiles this month; never more than monthly_limit' }),
    grace_used: Type.Integer({ description: "Compiles run in the paid plans' grace buffer this month; not charged" }),
    resets_at: Type.String({ format: 'date-time' }),
  }),
  stored_assets: Type.Object({
    count: Int,
    total_bytes: Int,
    count_limit: NullableInt,
    total_bytes_limit: Int,
    remaining_bytes: Int,
  }),
  templates: Type.Object({ count: Int, limit: NullableInt, remaining: NullableInt }),
  api_key: Type.Object({ prefix: Type.String(), created_at: Type.String({ format: 'date-time' }) }),
  limits: Type.Object({
    max_pages_per_document: Int,
    max_latex_bytes_per_document: Int,
    max_pdf_bytes_per_document: Int,
    max_assets_total_bytes_per_document: Int,
    max_assets_count_per_document: Int,
    max_stored_assets_count: NullableInt,
    max_stored_assets_total_bytes: Int,
    compile_timeout_seconds: Int,
    allowed_compilers: Type.Array(Type.String()),
  }),
});

export function usageRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/usage',
    {
      config: { auth: 'required' },
      schema: {
        summary: "The account's plan, counters and limits",
        tags: ['account'],
        response: { 200: UsageBody, ...errors(401) },
      },
    },
    async (req) => services.usage.report(accountOf(req)),
  );
}
