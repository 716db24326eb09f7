// Writes the OpenAPI document the server serves at /openapi.json to openapi.json at the
// repository root (`npm run openapi`), so clients can be generated without running a server.
// The document depends on no setting but the base URL, which becomes a server variable here.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { createServices } from '../src/services.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));
export const DOCUMENT_BASE_URL = 'http://localhost:8080';

/** The served document as the text of openapi.json. */
export async function openapiText(): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-openapi-'));
  const config = loadConfig({
    QUIRE_DATA_DIR: dataDir,
    QUIRE_DATABASE_URL: `sqlite://${join(dataDir, 'quire.db')}`,
    QUIRE_SECRET: 'openapi-document-only-0123456789',
    QUIRE_BASE_URL: DOCUMENT_BASE_URL,
    QUIRE_PREAMBLE_CACHE_MB: '0',
  });
  const services = await createServices(config, { log: pino({ level: 'silent' }) });
  try {
    const app = await buildApp(services);
    await app.ready();
    const doc = { ...app.swagger(), servers: [{ url: '{base}', variables: { base: { default: DOCUMENT_BASE_URL, description: 'QUIRE_BASE_URL of the server' } } }] };
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    await app.close();
    return text;
  } finally {
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(OPENAPI_FILE, await openapiText());
  console.log(`openapi: wrote ${OPENAPI_FILE}`);
}
