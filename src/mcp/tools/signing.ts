// Stored signing identities (/api/v1/signing-identities) as tools: list and delete. Storing one
// is HTTP-only on purpose: a private key and its password should not pass through an agent's
// context. A compile or render signs with `output.sign.identity` (docs/pdf-output.md#signatures).
import { Type, type Static } from '@sinclair/typebox';
import { paidPlansPhrase } from '../../quota/prose.js';
import { IDENTITY_NAME_PATTERN, IdentityListBody } from '../../signing/schema.js';
import { accountOf, defineTool } from '../tool.js';

const PAID = `Needs an API key on a paid plan (${paidPlansPhrase()}).`;
const Deleted = Type.Object({ deleted: Type.Literal(true), name: Type.String() });

export const listSigningIdentitiesTool = defineTool({
  name: 'list_signing_identities',
  title: 'List stored signing identities',
  description: `Lists the account's stored signing identities (name, certificate subject and issuer, validity, SHA-256 fingerprint; never the key). Sign a compile or render with output: {sign: {identity: "name"}} (add timestamp: true for PAdES B-T when the server has a timestamp authority). Identities are uploaded over HTTP only (POST /api/v1/signing-identities). ${PAID}`,
  inputSchema: Type.Object({}),
  outputSchema: IdentityListBody,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_args, context) => ({ identities: await context.services.signing.list(accountOf(context)) }),
  summarize: ({ identities }) =>
    [`${identities.length} stored signing identit${identities.length === 1 ? 'y' : 'ies'}.`, ...identities.map((i) => `- ${i.name}: ${i.subject} (issuer ${i.issuer}), valid ${i.not_before} to ${i.not_after}, SHA-256 ${i.fingerprint_sha256}`)].join('\n'),
});

export const deleteSigningIdentityTool = defineTool({
  name: 'delete_signing_identity',
  title: 'Delete a stored signing identity',
  description: `Deletes a stored signing identity by name (case-insensitive). Later compiles naming it fail with signing_identity_not_found. ${PAID}`,
  inputSchema: Type.Object({ name: Type.String({ pattern: IDENTITY_NAME_PATTERN }) }),
  outputSchema: Deleted,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async (args, context): Promise<Static<typeof Deleted>> => {
    await context.services.signing.remove(accountOf(context), args.name);
    return { deleted: true, name: args.name };
  },
  summarize: (body) => `Deleted signing identity ${body.name}.`,
});

export const signingTools = [listSigningIdentitiesTool, deleteSigningIdentityTool];
