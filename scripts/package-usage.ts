// Builds diagnosis/package-usage.json: for names several packages define, how many real
// documents load each package for them (issue 39's frequency table). The documents are the
// samples and manuals in Debian's TeX Live documentation packages of the version the default
// image runs (texlive-*-doc, outside the image: about 2.5 GB of .debs), read with the service's
// own package index. Documents the diagnosis bench or the real-project corpus reads are left
// out, so the table cannot hand the bench its answers.
//
//   node --import tsx scripts/package-usage.ts [--debs DIR]
//
// --debs: a folder that already holds the .debs (otherwise apt downloads them into the cache).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { filesUnder } from '../bench/diagnosis-docs.js';
import { texIndexDir, texliveSettings } from '../src/config.js';
import { ensureCatalog, type TexCatalog } from '../src/tex/diagnosis/catalog.js';
import { extractDefinitions, stripComments } from '../src/tex/diagnosis/extract.js';
import { KERNEL_COMMANDS, KERNEL_ENVIRONMENTS } from '../src/tex/diagnosis/names.js';
import { USAGE_FILE as OUT, USAGE_MIN_DOCUMENTS, type UsageTable } from '../src/tex/diagnosis/usage.js';
import { servedImages } from '../src/tex/image/store.js';

/** The documentation packages that hold LaTeX documents (metapost's hold MetaPost, not LaTeX). */
const DOC_PACKAGES = [
  'texlive-latex-base-doc',
  'texlive-latex-recommended-doc',
  'texlive-latex-extra-doc',
  'texlive-fonts-recommended-doc',
  'texlive-fonts-extra-doc',
  'texlive-pictures-doc',
  'texlive-pstricks-doc',
  'texlive-publishers-doc',
  'texlive-science-doc',
  'texlive-humanities-doc',
];
/** Larger files are manuals with code listings of every package under the sun, not documents that load what they use. */
const MAX_DOC_BYTES = 400_000;
const KERNEL = { command: new Set(KERNEL_COMMANDS), environment: new Set(KERNEL_ENVIRONMENTS) };
const CORPUS_SOURCES = new URL('../test/fixtures/projects/real/SOURCE.md', import.meta.url).pathname;

const image = servedImages({ sandbox: true, texlive: texliveSettings() }).find((i) => i.year === '2026');
if (!image) throw new Error('package-usage: the 2026 image is not built (npm run setup)');
const cat = await ensureCatalog(texIndexDir());
if (!cat) throw new Error('package-usage: the TeX Live index is unavailable');

const debs = process.argv.includes('--debs') ? (process.argv[process.argv.indexOf('--debs') + 1] as string) : download(image.suite, image.texliveVersion);
const tree = mkdtempSync(join(tmpdir(), 'quire-usage-'));
try {
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) {
    process.stderr.write(`package-usage: extracting ${deb}\n`);
    execFileSync('sh', ['-c', `dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" --wildcards '*.tex' '*.tex.gz' '*.ltx' '*.ltx.gz' 2>/dev/null || true`, 'sh', join(debs, deb), tree]);
  }
  const excluded = new Set([...benchFolders(join(image.root, 'usr/share/texlive/texmf-dist')), ...corpusFolders()]);
  const table = count(cat, join(tree, 'usr/share/doc/texlive-doc'), excluded);
  // One name a line: a rebuild's diff shows which names changed.
  const rows = Object.entries(table.names).map(([key, row]) => `  ${JSON.stringify(key)}: ${JSON.stringify(row)}`);
  writeFileSync(OUT, `{\n "source": ${JSON.stringify(table.source)},\n "documents": ${table.documents},\n "names": {\n${rows.join(',\n')}\n }\n}\n`);
  process.stderr.write(`package-usage: ${table.documents} documents, ${Object.keys(table.names).length} names → ${relative(process.cwd(), OUT)}\n`);
} finally {
  rmSync(tree, { recursive: true, force: true });
}

/** The .debs of the image's TeX Live version, with apt and the image's suite, in the cache. */
function download(suite: string, version: string): string {
  const base = join(texIndexDir(), 'usage-debs');
  const dir = join(base, version);
  mkdirSync(join(base, 'lists/partial'), { recursive: true });
  mkdirSync(join(base, 'cache/archives/partial'), { recursive: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(base, 'sources.list'), `deb http://deb.debian.org/debian ${suite} main\n`);
  const options = ['-o', `Dir::Etc::SourceList=${join(base, 'sources.list')}`, '-o', 'Dir::Etc::SourceParts=/dev/null', '-o', `Dir::State::Lists=${join(base, 'lists')}`, '-o', `Dir::Cache=${join(base, 'cache')}`];
  execFileSync('apt-get', [...options, 'update'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const have = new Set(readdirSync(dir));
  const wanted = DOC_PACKAGES.filter((p) => ![...have].some((f) => f.startsWith(`${p}_`)));
  if (wanted.length > 0) execFileSync('apt-get', [...options, 'download', ...wanted.map((p) => `${p}=${version}`)], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  return dir;
}

/** Package folders (`latex/koma-script`) under which the diagnosis bench finds documents in the image's tree. */
function benchFolders(texmf: string): string[] {
  const folders = new Set<string>();
  for (const path of filesUnder(texmf)) {
    if (!/\.tex$/.test(path) || statSync(path).size > 200_000) continue;
    const text = readFileSync(path, 'latin1');
    if (!/^\s*\\documentclass/m.test(text) || !/\\begin\{document\}/.test(text)) continue;
    const parts = relative(texmf, path).split('/');
    if (parts.length >= 3) folders.add(`${parts[1]}/${parts[2]}`);
  }
  return [...folders];
}

/** Package folders the real-project corpus took its documents from (SOURCE.md names each). */
function corpusFolders(): string[] {
  return [...readFileSync(CORPUS_SOURCES, 'utf8').matchAll(/texlive-doc\/([\w.-]+\/[\w.-]+)\//g)].map((m) => m[1] as string);
}

/**
 * Per name, per package: documents that load the package for it. A document counts for the
 * packages it loads itself that provide the name, the most specific ones (it loads blindtext
 * and mwe: blindtext, which mwe loads) — not for its class, which it did not choose for the name.
 */
function count(cat: TexCatalog, docRoot: string, excluded: ReadonlySet<string>): UsageTable {
  const counts = new Map<string, Map<string, number>>();
  const seen = new Set<string>();
  let documents = 0;
  for (const path of filesUnder(docRoot)) {
    if (!/\.(tex|ltx)(\.gz)?$/.test(path) || statSync(path).size > MAX_DOC_BYTES) continue;
    const folder = relative(docRoot, path).split('/').slice(0, 2).join('/');
    if (excluded.has(folder)) continue;
    const raw = readFileSync(path);
    const text = stripComments((path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('latin1'));
    const begin = text.search(/\\begin\s*\{document\}/);
    const cls = /^\s*\\documentclass\s*(?:\[[^\]]*\]\s*)?\{\s*([^}\s]+)\s*\}/m.exec(text)?.[1];
    if (begin === -1 || !cls) continue;
    const hash = createHash('sha1').update(text).digest('hex');
    if (seen.has(hash)) continue; // the same sample in two languages' folders
    seen.add(hash);
    const loaded = new Set<string>();
    for (const m of text.slice(0, begin).matchAll(/\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]+)\}/g)) {
      for (const p of (m[1] ?? '').split(',')) if (cat.has(p.trim())) loaded.add(p.trim());
    }
    if (loaded.size === 0) continue;
    documents++;
    const byClass = cat.closure(`${cls}.cls`);
    const own = extractDefinitions(text);
    const names = new Set<string>();
    for (const m of text.matchAll(/\\([A-Za-z]+)|\\begin\s*\{([A-Za-z*-]+)\}/g)) names.add(m[2] !== undefined ? `e:${m[2]}` : `c:${m[1]}`);
    for (const key of names) {
      const kind = key.startsWith('e:') ? 'environment' : 'command';
      const name = key.slice(2);
      if (KERNEL[kind].has(name) || cat.inKernel(name, kind) || (kind === 'command' ? own.commands : own.environments).has(name)) continue;
      const definers = cat.definers(name, kind);
      if (definers.length === 0 || definers.some((d) => byClass.has(d.package))) continue;
      const users = [...loaded].filter((p) => cat.provides(p, name, kind));
      const specific = users.filter((p) => !users.some((q) => q !== p && cat.closure(p).has(q)));
      for (const p of specific) {
        const row = counts.get(key) ?? new Map<string, number>();
        row.set(p, (row.get(p) ?? 0) + 1);
        counts.set(key, row);
      }
    }
  }
  // Only what can decide between candidates: names more than one installed package provides,
  // and packages enough documents load for them.
  const names: UsageTable['names'] = {};
  for (const [key, row] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const kept = [...row].filter(([, n]) => n >= USAGE_MIN_DOCUMENTS).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
    const kind = key.startsWith('e:') ? 'environment' : 'command';
    const packages = new Set(cat.definers(key.slice(2), kind).map((d) => d.package).filter((p) => cat.has(p)));
    if (kept.length === 0 || (packages.size <= 1 && kept.every(([p]) => packages.has(p)))) continue;
    names[key] = Object.fromEntries(kept);
  }
  return { source: `Debian ${DOC_PACKAGES.join(', ')} ${image?.texliveVersion ?? ''}`.trim(), documents, names };
}
