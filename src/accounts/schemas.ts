// Wire schemas of the account: the Usage object (SPEC §2.8), shared by GET /api/v1/usage and the
// MCP usage tool, and the bodies of sign-up and key rotation.
import { Type } from '@sinclair/typebox';

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
  fair_use: Type.Object(
    {
      concurrent_compiles_limit: Int,
      compiles_in_flight: Int,
      failure_budget_seconds: Type.Number(),
      failure_seconds_used: Type.Number({ description: 'TeX seconds of failed and timed-out compiles in this window' }),
      failure_window_seconds: Int,
      failure_window_resets_at: Type.String({ format: 'date-time' }),
    },
    { description: 'Limits on what is free (docs/fair-use.md): compiles in flight at once and TeX time of failures per window' },
  ),
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

export const SignupRequest = Type.Object(
  { email: Type.String({ maxLength: 254, description: 'Address of the new Free account' }) },
  { additionalProperties: false },
);

const AccountBody = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  plan: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

export const SignupResponse = Type.Object({
  api_key: Type.String({ description: 'The new key. Shown once: only its hash is stored.' }),
  account: AccountBody,
});

export const RotateResponse = Type.Object({
  api_key: Type.String({ description: 'The new key; the key used for this request is revoked.' }),
  prefix: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
