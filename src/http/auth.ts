// Authentication is declared per route (`config: { auth: 'required' | 'optional' }`) and
// resolved in onRequest, before the body is parsed: a bad key is a 401 whatever the body.
import type { FastifyRequest } from 'fastify';
import { identify, type AccountCaller, type Caller } from '../accounts/caller.js';
import type { Services } from '../services.js';
import type { App } from './types.js';

export type AuthMode = 'required' | 'optional';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

const SECURITY: Record<AuthMode, Array<Record<string, string[]>>> = {
  required: [{ bearer: [] }, { apiKey: [] }],
  // `{}` first: the route also works with no credentials.
  optional: [{}, { bearer: [] }, { apiKey: [] }],
};

export function installAuth(app: App, services: Services): void {
  app.decorateRequest('caller', null);
  app.addHook('onRoute', (route) => {
    const mode = route.config?.auth;
    if (mode && route.schema) route.schema = { ...route.schema, security: SECURITY[mode] };
  });
  app.addHook('onRequest', async (req) => {
    const mode = req.routeOptions.config.auth;
    if (!mode) return;
    req.caller = await identify(services.accounts, req.headers, req.ip, { required: mode === 'required' });
  });
}

/** The caller of a route declared `auth: 'optional'` or `'required'`. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error(`route ${req.routeOptions.url} reads a caller but declares no auth`);
  return req.caller;
}

/** The account calling a route declared `auth: 'required'`. */
export function accountOf(req: FastifyRequest): AccountCaller {
  const caller = callerOf(req);
  if (caller.kind !== 'account') throw new Error(`route ${req.routeOptions.url} must declare auth: 'required'`);
  return caller;
}
