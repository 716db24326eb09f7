// Authentication is declared per route (`config: { auth: 'optional' | 'required' | 'paid' }`)
// and resolved in onRequest, before the body is parsed: a bad key is a 401 and a Free key on a
// paid feature a 403, whatever the body.
import type { FastifyRequest } from 'fastify';
import { identify, requirePaidPlan, type AccountCaller, type Caller } from '../accounts/caller.js';
import { links } from '../links.js';
import type { Services } from '../services.js';
import type { App } from './types.js';

/** `paid`: a key of a paid plan (saved templates, stored assets, render; SPEC §5.7). */
export type AuthMode = 'required' | 'optional' | 'paid';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

export function installAuth(app: App, services: Services): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (req) => {
    const mode = req.routeOptions.config.auth;
    if (!mode) return;
    const caller = await identify(services.accounts, req.headers, req.ip, { required: mode !== 'optional' });
    req.caller = mode === 'paid' ? requirePaidPlan(caller, 'Saved templates, stored assets and render', links(services.config).upgradeUrl) : caller;
  });
}

/** The caller of a route declared `auth: 'optional'` or `'required'`. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error(`route ${req.routeOptions.url} reads a caller but declares no auth`);
  return req.caller;
}

/** The account calling a route declared `auth: 'required'` or `'paid'`. */
export function accountOf(req: FastifyRequest): AccountCaller {
  const caller = callerOf(req);
  if (caller.kind !== 'account') throw new Error(`route ${req.routeOptions.url} must declare auth: 'required'`);
  return caller;
}
