// Real documents for `npm run bench:diagnosis` besides the image's own tree (which holds no
// documentation, so only a dozen self-contained documents): the real-project corpus
// (test/fixtures/projects/real/, each main.tex sent with its project's files, as a caller sends
// a project) and the gallery's templates filled with their sample data in their default color.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadCatalog } from '../src/gallery/catalog.js';
import { normaliseData } from '../src/gallery/validate.js';
import type { Compiler } from '../src/quota/plans.js';
import { renderInThread } from '../src/templates/liquid.js';

export interface BenchDoc {
  path: string;
  source: string;
  engine: Compiler;
  files?: Array<{ name: string; data: Buffer }>;
}

const REAL = new URL('../test/fixtures/projects/real/', import.meta.url).pathname;
/** A project whose files weigh more is left out (the bench sends them with every mutant). */
const MAX_PROJECT_BYTES = 6 * 1024 * 1024;

/** Every file under `dir`, in name order (nothing when it cannot be read). */
export function* filesUnder(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* filesUnder(path);
    else if (e.isFile()) yield path;
  }
}

/** The real-project corpus: main.tex and the project's other files. */
export function projectDocs(): BenchDoc[] {
  const corpus = JSON.parse(readFileSync(join(REAL, 'corpus.json'), 'utf8')) as Record<string, { engine: Compiler }>;
  const docs: BenchDoc[] = [];
  for (const [name, meta] of Object.entries(corpus).sort(([a], [b]) => a.localeCompare(b))) {
    const dir = join(REAL, name);
    const paths = [...filesUnder(dir)];
    if (paths.reduce((sum, path) => sum + statSync(path).size, 0) > MAX_PROJECT_BYTES) continue;
    const files = paths.filter((path) => relative(dir, path) !== 'main.tex').map((path) => ({ name: relative(dir, path), data: readFileSync(path) }));
    docs.push({ path: `projects/real/${name}`, source: readFileSync(join(dir, 'main.tex'), 'utf8'), engine: meta.engine, files });
  }
  return docs;
}

/** The gallery's templates, filled as GET /public_templates/{slug}/sample fills them. */
export async function galleryDocs(): Promise<BenchDoc[]> {
  const docs: BenchDoc[] = [];
  for (const t of loadCatalog()) {
    const values = { ...(normaliseData(t.schema, t.sample_data) as Record<string, unknown>), theme: { name: t.default_color, accent: t.palette[t.default_color] } };
    const { latex } = await renderInThread(t.latex_with_placeholders, values);
    docs.push({ path: `gallery/${t.slug}`, source: latex, engine: t.compiler });
  }
  return docs;
}
