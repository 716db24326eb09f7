// Bundles web/ into public/build/: one ES module per page plus lazily loaded chunks (the
// editor and pdf.js), content-hashed names, .br and .gz twins, and manifest.json, which the
// server reads to link the current files. Fails when a page's eager JavaScript is over budget.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'public', 'build');
const PAGES = ['studio', 'signup', 'dashboard'];
/** Gzipped JavaScript a page may load before any lazy import. */
const EAGER_BUDGET_BYTES = 300 * 1024;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: [...PAGES.map((p) => `web/${p}.ts`), 'web/app.css'],
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  minify: true,
  sourcemap: 'linked',
  entryNames: '[name]-[hash]',
  chunkNames: 'chunks/[name]-[hash]',
  assetNames: 'assets/[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

// pdf.js runs its parser in a worker loaded by URL: copy it in with a content hash.
const require = createRequire(import.meta.url);
const workerSource = readFileSync(require.resolve('pdfjs-dist/build/pdf.worker.min.mjs'));
const workerName = `pdf.worker-${createHash('sha256').update(workerSource).digest('hex').slice(0, 8).toUpperCase()}.mjs`;
writeFileSync(join(out, workerName), workerSource);

const outputs = result.metafile.outputs;
const rel = (file) => relative(out, join(root, file)).split('\\').join('/');
const gz = (file) => gzipSync(readFileSync(join(out, file)), { level: 9 }).length;

/** Files loaded eagerly from an output: static imports, transitively. */
function eagerClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const imp of outputs[file]?.imports ?? []) {
    if (imp.kind === 'import-statement') eagerClosure(imp.path, seen);
  }
  return seen;
}

const manifest = { entries: {}, css: '', pdfWorker: workerName };
const report = [];
for (const [file, meta] of Object.entries(outputs)) {
  if (!meta.entryPoint) continue;
  if (meta.entryPoint === 'web/app.css') {
    manifest.css = rel(file);
    continue;
  }
  const page = PAGES.find((p) => meta.entryPoint === `web/${p}.ts`);
  if (!page) continue;
  const eager = [...eagerClosure(file)];
  const eagerGz = eager.reduce((sum, f) => sum + gz(rel(f)), 0);
  manifest.entries[page] = { js: rel(file), preload: eager.filter((f) => f !== file).map(rel) };
  report.push({ page, eagerGz, eager });
  if (eagerGz > EAGER_BUDGET_BYTES) {
    console.error(`build-web: ${page} loads ${eagerGz} bytes of gzipped JavaScript eagerly (budget ${EAGER_BUDGET_BYTES})`);
    process.exitCode = 1;
  }
}
writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');

// Precompressed twins: the server sends them as they are, with no work per request.
function compressAll(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      compressAll(path);
      continue;
    }
    // Source maps are only fetched by developer tools: not worth the compression time.
    if (!/\.(m?js|css|json|svg)$/.test(name)) continue;
    const body = readFileSync(path);
    writeFileSync(path + '.gz', gzipSync(body, { level: 9 }));
    // Brotli's top quality costs seconds on the 1.4 MB pdf.js worker for a percent or two.
    const quality = body.length > 256 * 1024 ? 9 : 11;
    writeFileSync(
      path + '.br',
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    );
  }
}
compressAll(out);

const eagerFiles = new Set(report.flatMap((r) => r.eager));
const lazy = Object.keys(outputs)
  .filter((f) => f.endsWith('.js') && !eagerFiles.has(f))
  .map((f) => `${rel(f)} ${(gz(rel(f)) / 1024).toFixed(1)} KB`);
for (const r of report) console.log(`build-web: ${r.page}: ${(r.eagerGz / 1024).toFixed(1)} KB gzipped eager JS (${r.eager.length} files)`);
console.log(`build-web: lazy: ${lazy.join(', ')}; pdf worker ${(gzipSync(workerSource).length / 1024).toFixed(1)} KB gzipped`);
