// `npm start`: configuration, services, HTTP; stops cleanly on SIGTERM.
import { buildApp } from './app.js';
import { createLogger } from './log.js';
import { openServices } from './services.js';
import { configOrExit, requireSandbox } from './startup.js';

async function main(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config.logLevel);
  requireSandbox(config, log);
  const services = await openServices(config, { log });
  const app = await buildApp(services);
  const { swept } = await services.start();
  if (swept.length > 0) log.warn({ swept: swept.length }, 'removed job workspaces left by a stopped process');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      log.error('shutdown took over 30 s; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    await app.close();
    await services.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  const engines = Object.entries(services.engines)
    .map(([name, s]) => `${name}:${s.available ? 'ok' : 'missing'}`)
    .join(' ');
  log.info({ url: config.baseUrl, database: services.db.dialect, engines }, `Quire is serving on ${config.baseUrl}`);
}

main().catch((err) => {
  console.error('quire: failed to start:', err);
  process.exit(1);
});
