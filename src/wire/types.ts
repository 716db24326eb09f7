// The Fastify instance both doors mount their routes on (the HTTP routes and the MCP endpoint):
// TypeBox schemas type each route, pino logs.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import type { Services } from '../services.js';

/** The Fastify instance every route module receives. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  Logger,
  TypeBoxTypeProvider
>;

/** A route module: registers its routes on the app, calling into `services`. */
export type Routes = (app: App, services: Services) => void;
