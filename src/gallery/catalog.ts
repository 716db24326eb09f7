// The public gallery's templates, read once from the repository's gallery/ folder.
// One folder per template (gallery/<slug>/template.tex + meta.json); schema.json,
// sample_data.json and instructions.md live in the template folder or, shared by every
// design of a document, in gallery/_documents/<document>/.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project-root.js';
import type { Compiler } from '../quota/plans.js';
import type { JsonSchema } from '../templates/data-schema.js';

export const GALLERY_CATEGORIES = [
  'invoices',
  'purchase orders',
  'packing slips',
  'delivery notes',
  'receipts',
  'reports',
  'certificates',
  'resumes',
  'CVs',
  'cover letters',
] as const;
export type GalleryCategory = (typeof GALLERY_CATEGORIES)[number];

export type { JsonSchema };

export interface GalleryTemplate {
  slug: string;
  title: string;
  category: GalleryCategory;
  summary: string;
  document: string;
  design: string;
  /** Accepted color names, default first. */
  colors: string[];
  default_color: string;
  /** Color name → six hex digits, handed to the template as `theme.accent`. */
  palette: Record<string, string>;
  compiler: Compiler;
  schema: JsonSchema;
  sample_data: Record<string, unknown>;
  instructions: string;
  latex_with_placeholders: string;
}

interface Meta {
  title: string;
  category: GalleryCategory;
  summary: string;
  document: string;
  design: string;
  compiler?: Compiler;
  default_color: string;
  colors: Record<string, string>;
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const HEX = /^[0-9A-F]{6}$/;

function fail(slug: string, problem: string): never {
  throw new Error(`gallery/${slug}: ${problem}`);
}

function readShared(root: string, slug: string, document: string, file: string): string {
  for (const dir of [join(root, slug), join(root, '_documents', document)]) {
    const path = join(dir, file);
    if (existsSync(path)) return readFileSync(path, 'utf8');
  }
  return fail(slug, `${file} missing (looked in the template folder and _documents/${document})`);
}

function loadOne(root: string, slug: string): GalleryTemplate {
  const meta = JSON.parse(readFileSync(join(root, slug, 'meta.json'), 'utf8')) as Meta;
  if (!GALLERY_CATEGORIES.includes(meta.category)) fail(slug, `unknown category "${meta.category}"`);
  const names = Object.keys(meta.colors ?? {});
  if (names.length < 3) fail(slug, 'needs at least three colors');
  for (const [name, hex] of Object.entries(meta.colors)) {
    if (!HEX.test(hex)) fail(slug, `color ${name} must be six upper-case hex digits`);
  }
  if (!names.includes(meta.default_color)) fail(slug, 'default_color is not one of colors');
  return {
    slug,
    title: meta.title,
    category: meta.category,
    summary: meta.summary,
    document: meta.document,
    design: meta.design,
    colors: [meta.default_color, ...names.filter((n) => n !== meta.default_color)],
    default_color: meta.default_color,
    palette: meta.colors,
    compiler: meta.compiler ?? 'pdflatex',
    schema: JSON.parse(readShared(root, slug, meta.document, 'schema.json')) as JsonSchema,
    sample_data: JSON.parse(readShared(root, slug, meta.document, 'sample_data.json')) as Record<string, unknown>,
    instructions: readShared(root, slug, meta.document, 'instructions.md'),
    latex_with_placeholders: readFileSync(join(root, slug, 'template.tex'), 'utf8'),
  };
}

/** Every template under `root`, in category order, then by document and design. */
export function loadCatalog(root = join(projectRoot(), 'gallery')): GalleryTemplate[] {
  const slugs = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('_'))
    .map((entry) => entry.name);
  const templates = slugs.map((slug) => {
    if (!SLUG.test(slug)) fail(slug, 'folder name is not a valid slug');
    return loadOne(root, slug);
  });
  const rank = (t: GalleryTemplate) => GALLERY_CATEGORIES.indexOf(t.category);
  return templates.sort(
    (a, b) => rank(a) - rank(b) || a.document.localeCompare(b.document) || a.slug.localeCompare(b.slug),
  );
}
