// Bundles the client commands (`quire compile|watch|login`, src/cli/client/) into one file,
// dist/cli/client.js (and a chunk for watch), which bin/quire.js runs for them: one module to load instead of about
// thirty (the commands, @quire/client, openapi-fetch, fflate), and with the Fetch API classes of
// src/cli/client/light-globals.ts in place of Node's, so undici never loads. tsc's dist/src/
// keeps the same commands unbundled (`node dist/src/cli/quire.js compile` works as well).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'cli');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { client: 'src/cli/client/index.ts' },
  outdir: out,
  // `quire watch`'s own code (and node:crypto, for its digests) loads only for watch.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  inject: ['src/cli/client/light-globals.ts'],
  plugins: [
    {
      // @quire/client's webhook check is not used by the commands: its package need not load.
      name: 'unused-webhooks',
      setup(build) {
        build.onResolve({ filter: /^standardwebhooks$/ }, () => ({ path: 'standardwebhooks', external: true, sideEffects: false }));
      },
    },
    {
      // fflate's Node build requires worker_threads at load for its async API; zipSync needs
      // none of it, and the browser build is the same code without that.
      name: 'fflate-without-workers',
      setup(build) {
        build.onResolve({ filter: /^fflate$/ }, () => ({ path: require.resolve('fflate').replace(/lib[\\/]node\.cjs$/, join('esm', 'browser.js')) }));
      },
    },
  ],
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});

// The sources the bundle was made of: bin/quire.js checks only these before a client command
// (a stat of each, not a walk of src/), and rebuilds when one is newer than the build.
const inputs = Object.keys(result.metafile.inputs).filter((path) => !path.includes('node_modules/')).sort();
writeFileSync(join(out, 'inputs.json'), `${JSON.stringify(inputs, null, 1)}\n`);
