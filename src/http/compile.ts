// POST /api/v1/compile: parse, call the compile service, send its result.
import { anonymousTierPhrase } from '../quota/prose.js';
import { CompileFailureBody, CompileRequestBody, CompileSuccessBody } from '../compile/schemas.js';
import type { Services } from '../services.js';
import { AcceptedBody, acceptAsync, asyncOf } from './async.js';
import { callerOf } from './auth.js';
import { COMPILE_ASSET_NAMES } from '../wire/json-safety.js';
import { errors } from '../wire/schemas.js';
import type { App } from './types.js';

export function compileRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/compile',
    {
      config: { auth: 'optional', assetNames: COMPILE_ASSET_NAMES },
      schema: {
        summary: 'Compile LaTeX source into a PDF',
        description:
          `Returns a signed pdf_url. Without credentials the anonymous tier applies (${anonymousTierPhrase()}). Failed or refused compiles cost no quota.`,
        tags: ['compile'],
        body: CompileRequestBody,
        response: { 200: CompileSuccessBody, 202: AcceptedBody, 422: CompileFailureBody, ...errors(400, 401, 403, 413, 429, 500, 503) },
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const { async, callbackUrl, rest } = asyncOf(req.body);
      if (!async) return services.compile.compile(caller, rest, { via: 'compile' });
      return acceptAsync(services, reply, caller, 'compile', callbackUrl, (onAccepted) =>
        services.compile.compile(caller, rest, { via: 'compile', onAccepted }),
      );
    },
  );
}
