// usage: GET /api/v1/usage as a tool.
import { Type } from '@sinclair/typebox';
import { UsageBody } from '../../accounts/schemas.js';
import { accountOf, defineTool } from '../tool.js';

export const usageTool = defineTool({
  name: 'usage',
  title: 'Plan, usage and limits',
  description:
    "The account's plan, compilations used this month and when the count resets, saved templates and stored assets against their caps, the key's prefix, and every per-document limit (pages, source bytes, PDF bytes, assets, timeout, allowed compilers). Check it before a large or unusual compile. Needs an API key.",
  inputSchema: Type.Object({}),
  outputSchema: UsageBody,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_args, context) => context.services.usage.report(accountOf(context)),
  summarize: (u) => {
    return [
      `Plan ${u.user.plan}: ${u.usage.used_this_month} of ${u.usage.monthly_limit} compilations used this month (resets ${u.usage.resets_at}).` +
        (u.usage.grace_used > 0 ? ` ${u.usage.grace_used} more ran in the grace buffer (not charged); tell the user to upgrade.` : ''),
      `Templates: ${u.templates.count} of ${u.templates.limit ?? 'unlimited'}. Stored assets: ${u.stored_assets.count} (${u.stored_assets.total_bytes} of ${u.stored_assets.total_bytes_limit} bytes).`,
    ].join('\n');
  },
});
