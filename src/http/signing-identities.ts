// Stored signing identities (extension, issue 40; docs/pdf-output.md#stored-identities):
// upload a PKCS#12 once, sign compiles with `output.sign.identity`. Paid plans. The key and
// its password are never returned: the list shows the certificate's facts only.
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { CreateIdentityBody, IDENTITY_NAME_PATTERN, IdentityBody, IdentityListBody } from '../signing/schema.js';
import { accountOf } from './auth.js';
import type { App } from './types.js';

const NameParam = Type.Object({ name: Type.String({ pattern: IDENTITY_NAME_PATTERN }) });

export function signingIdentityRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/signing-identities',
    {
      config: { auth: 'paid', errors: ['invalid_pkcs12', 'pkcs12_password_incorrect', 'signing_certificate_not_valid', 'signing_identity_exists'] },
      schema: {
        operationId: 'createSigningIdentity',
        summary: 'Store a PKCS#12 signing identity (sealed with the server secret) for output.sign.identity',
        tags: ['signing'],
        body: CreateIdentityBody,
        response: { 201: IdentityBody },
      },
    },
    async (req, reply) => reply.code(201).header('cache-control', 'no-store').send(await services.signing.create(accountOf(req), req.body)),
  );

  app.get(
    '/api/v1/signing-identities',
    {
      config: { auth: 'paid' },
      schema: {
        operationId: 'listSigningIdentities',
        summary: "The account's stored signing identities: name, subject, issuer, validity, fingerprint (never the key)",
        tags: ['signing'],
        response: { 200: IdentityListBody },
      },
    },
    async (req) => ({ identities: await services.signing.list(accountOf(req)) }),
  );

  app.delete(
    '/api/v1/signing-identities/:name',
    {
      config: { auth: 'paid', errors: ['signing_identity_not_found'] },
      schema: {
        operationId: 'deleteSigningIdentity',
        summary: 'Delete a stored signing identity; later compiles naming it fail with signing_identity_not_found',
        tags: ['signing'],
        params: NameParam,
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (req, reply) => {
      await services.signing.remove(accountOf(req), req.params.name);
      return reply.code(204).send();
    },
  );
}
