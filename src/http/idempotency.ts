// Idempotency-Key on POST: an account's request with a key runs once; the same key and the same
// request within 24 h replays the stored status and body (header `idempotent-replayed: true`).
// Rules live in IdempotencyStore. Keys are per account; anonymous requests ignore the header.
import type { FastifyRequest } from 'fastify';
import { fingerprint, IdempotencyStore } from '../idempotency/store.js';
import type { Services } from '../services.js';
import type { App } from './types.js';

/**
 * POSTs never replayed: a rotation answers with a fresh secret that must not be stored, and
 * MCP carries its own `idempotency_key` argument per tool call.
 */
const EXCLUDED = new Set(['/api/v1/api_key/rotate', '/api/v1/webhooks/secret/rotate', '/mcp']);

/** Whether an account's Idempotency-Key is honoured on this route (operations.ts documents it). */
export function takesIdempotencyKey(method: string, url: string): boolean {
  return method === 'POST' && !EXCLUDED.has(url);
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim: { accountId: number; key: string } | null;
  }
}

function keyOf(req: FastifyRequest): string | undefined {
  const raw = req.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

export function installIdempotency(app: App, services: Services): void {
  app.decorateRequest('idempotencyClaim', null);

  app.addHook('preHandler', async (req, reply) => {
    const key = keyOf(req);
    const route = req.routeOptions.url ?? '';
    if (key === undefined || !takesIdempotencyKey(req.method, route) || req.caller?.kind !== 'account') return;
    const accountId = req.caller.account.id;
    const print = fingerprint(`http POST ${route} ${JSON.stringify(req.params ?? {})}`, req.body ?? null);
    const claim = await services.idempotency.claim(accountId, key, print);
    if (claim.kind === 'replay') {
      const { status, body, contentType } = claim.response;
      void reply.code(status).header('idempotent-replayed', 'true');
      if (contentType) void reply.header('content-type', contentType);
      return reply.send(body);
    }
    req.idempotencyClaim = { accountId, key };
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const claim = req.idempotencyClaim;
    if (!claim) return payload;
    req.idempotencyClaim = null;
    const status = reply.statusCode;
    if (IdempotencyStore.keeps(status) && (typeof payload === 'string' || payload === null || payload === undefined)) {
      const contentType = reply.getHeader('content-type');
      await services.idempotency.complete(claim.accountId, claim.key, {
        status,
        body: typeof payload === 'string' ? payload : '',
        contentType: typeof contentType === 'string' ? contentType : null,
      });
    } else {
      await services.idempotency.release(claim.accountId, claim.key);
    }
    return payload;
  });

  // A request that never reached onSend (client gone) frees its key for the retry.
  app.addHook('onResponse', async (req) => {
    const claim = req.idempotencyClaim;
    if (!claim) return;
    req.idempotencyClaim = null;
    await services.idempotency.release(claim.accountId, claim.key);
  });
}
