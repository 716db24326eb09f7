// The gallery's HTML: an index grouped by category and one page per template.
import { GALLERY_CATEGORIES, type GalleryTemplate, type JsonSchema } from '../../gallery/catalog.js';
import type { GalleryEntry } from '../../gallery/service.js';
import { h, layout, miniMarkdown } from './html.js';

const CATEGORY_TITLES: Record<string, string> = {
  invoices: 'Invoices',
  'purchase orders': 'Purchase orders',
  'packing slips': 'Packing slips',
  'delivery notes': 'Delivery notes',
  receipts: 'Receipts',
  reports: 'Reports',
  certificates: 'Certificates',
  resumes: 'Résumés',
  CVs: 'Academic CVs',
  'cover letters': 'Cover letters',
};

function categoryId(category: string): string {
  return category.toLowerCase().replace(/[^a-z]+/g, '-');
}

function swatches(t: Pick<GalleryTemplate, 'colors' | 'palette'>): string {
  return `<span class="swatches">${t.colors
    .map((name) => `<span class="swatch" style="background:#${h(t.palette[name])}" title="${h(name)}"></span>`)
    .join('')}</span>`;
}

export function indexPage(templates: GalleryTemplate[], entries: GalleryEntry[], baseUrl: string): string {
  const bySlug = new Map(entries.map((e) => [e.slug, e]));
  const sections = GALLERY_CATEGORIES.map((category) => {
    const members = templates.filter((t) => t.category === category);
    if (members.length === 0) return '';
    const cards = members
      .map((t) => {
        const e = bySlug.get(t.slug)!;
        return `<li class="card">
<a href="/gallery/${h(t.slug)}" class="card-link">
<span class="sheet"><img src="${h(new URL(e.preview_url).pathname)}" alt="First page of ${h(t.title)}" loading="lazy" width="300" height="424"></span>
<span class="card-title">${h(t.title)}</span>
</a>
<p class="card-summary">${h(t.summary)}</p>
<p class="card-meta">${h(t.design)} design ${swatches(t)}</p>
</li>`;
      })
      .join('\n');
    return `<section class="category" id="${categoryId(category)}">
<h2>${h(CATEGORY_TITLES[category] ?? category)}</h2>
<ul class="cards">
${cards}
</ul>
</section>`;
  }).join('\n');
  const toc = GALLERY_CATEGORIES.map(
    (c) => `<a href="#${categoryId(c)}">${h(CATEGORY_TITLES[c] ?? c)}</a>`,
  ).join('');
  return layout({
    title: 'Template gallery — Quire',
    description: 'Professionally typeset LaTeX templates for invoices, orders, receipts, reports, certificates, résumés and letters. Render them to PDF from JSON, no account needed.',
    canonical: `${baseUrl}/gallery`,
    body: `<div class="intro">
<h1>Template gallery</h1>
<p class="lede">Business documents and personal papers, set with LaTeX. Send JSON, receive a PDF: every template takes the same data in each of its designs and colors, and needs no account to try.</p>
<nav class="toc" aria-label="Categories">${toc}</nav>
</div>
<div class="categories">
${sections}
</div>`,
  });
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown>)?.[part];
  return { ...(target as JsonSchema), ...schema };
}

function typeName(s: JsonSchema): string {
  const type = Array.isArray(s.type) ? s.type.join(' or ') : String(s.type ?? 'any');
  if (s.type === 'array') {
    const items = (s.items ?? {}) as JsonSchema;
    return items.type === 'object' ? 'list of objects' : `list of ${String(items.type ?? 'values')}s`;
  }
  if (s.format === 'date') return 'date';
  return type;
}

/** Schema → flat rows (`items[].quantity`), in schema order. */
export function fieldRows(schema: JsonSchema, root: JsonSchema = schema, prefix = ''): FieldRow[] {
  const s = resolveRef(schema, root);
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const rows: FieldRow[] = [];
  for (const [key, raw] of Object.entries(properties)) {
    const sub = resolveRef(raw, root);
    const name = prefix ? `${prefix}.${key}` : key;
    const constraints: string[] = [];
    if (typeof sub.pattern === 'string') constraints.push(`pattern ${sub.pattern}`);
    if (typeof sub.minimum === 'number') constraints.push(`≥ ${sub.minimum}`);
    if (typeof sub.maximum === 'number') constraints.push(`≤ ${sub.maximum}`);
    if (typeof sub.minItems === 'number' && sub.minItems > 0) constraints.push(`at least ${sub.minItems}`);
    if (typeof sub.maxItems === 'number') constraints.push(`at most ${sub.maxItems}`);
    const description = [typeof sub.description === 'string' ? sub.description : '', constraints.join(', ')]
      .filter(Boolean)
      .join(' — ');
    rows.push({ name, type: typeName(sub), required: required.has(key), description });
    if (sub.type === 'object') rows.push(...fieldRows(sub, root, name));
    const items = sub.type === 'array' ? resolveRef((sub.items ?? {}) as JsonSchema, root) : null;
    if (items && items.type === 'object') rows.push(...fieldRows(items, root, `${name}[]`));
  }
  return rows;
}

export function templatePage(
  t: GalleryTemplate,
  entry: GalleryEntry,
  siblings: GalleryTemplate[],
): string {
  const rows = fieldRows(t.schema)
    .map(
      (r) => `<tr><td><code>${h(r.name)}</code></td><td>${h(r.type)}</td><td>${r.required ? 'required' : '<span class="quiet">optional</span>'}</td><td>${h(r.description)}</td></tr>`,
    )
    .join('\n');
  const sample = JSON.stringify(t.sample_data, null, 2);
  const body = JSON.stringify({ data: t.sample_data, color: t.default_color }, null, 2);
  const curl = `curl -s ${entry.render_url} \\
  -H 'Content-Type: application/json' \\
  -d @- <<'JSON'
${body.replace(/'/g, "'\\''")}
JSON`;
  const others = siblings
    .filter((s) => s.slug !== t.slug)
    .map((s) => `<a href="/gallery/${h(s.slug)}">${h(s.title)}</a>`)
    .join(', ');
  const options = t.colors
    .map((c) => `<option value="${h(c)}"${c === t.default_color ? ' selected' : ''}>${h(c)}${c === t.default_color ? ' (default)' : ''}</option>`)
    .join('');
  return layout({
    title: `${t.title} — Quire gallery`,
    description: t.summary,
    canonical: entry.page_url,
    body: `<p class="crumbs"><a href="/gallery">Gallery</a> <span aria-hidden="true">›</span> <a href="/gallery#${categoryId(t.category)}">${h(CATEGORY_TITLES[t.category] ?? t.category)}</a></p>
<div class="template-head">
<div class="sheet large"><img src="${h(new URL(entry.preview_url).pathname)}" alt="First page of ${h(t.title)} rendered from the sample data" width="450" height="636"></div>
<div class="template-info">
<h1>${h(t.title)}</h1>
<p class="lede">${h(t.summary)}</p>
<dl class="facts">
<dt>Slug</dt><dd><code>${h(t.slug)}</code></dd>
<dt>Document</dt><dd><code>${h(t.document)}</code>${others ? ` — same data as ${others}` : ''}</dd>
<dt>Colors</dt><dd>${swatches(t)} ${t.colors.map((c) => `<code>${h(c)}</code>`).join(' ')}</dd>
<dt>Engine</dt><dd><code>${h(t.compiler)}</code></dd>
</dl>
<section class="try" aria-labelledby="try-heading">
<h2 id="try-heading">Try it</h2>
<form id="try-form" data-render-url="${h(new URL(entry.render_url).pathname)}">
<label for="try-color">Color</label>
<select id="try-color" name="color">${options}</select>
<label for="try-data">Data <span class="quiet">(JSON, edit freely)</span></label>
<textarea id="try-data" name="data" rows="12" spellcheck="false">${h(sample)}</textarea>
<div class="actions"><button type="submit" id="try-submit">Render PDF</button> <a id="try-pdf" class="pdf-link" hidden target="_blank" rel="noopener">Open the PDF</a></div>
<p id="try-status" class="status" role="status" aria-live="polite"></p>
</form>
<p class="quiet small">Without an API key the anonymous tier applies: three documents a day, three pages each.</p>
</section>
</div>
</div>
<section>
<h2>Fields</h2>
<div class="table-scroll"><table class="fields">
<thead><tr><th>Field</th><th>Type</th><th></th><th>Meaning</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>
</section>
<section>
<h2>Render with curl</h2>
<pre class="code"><code>${h(curl)}</code></pre>
<p>The answer carries <code>pdf_url</code>, a signed link to the PDF. Add <code>-H "Authorization: Bearer $QUIRE_KEY"</code> to render on your plan.</p>
</section>
<section>
<h2>Instructions</h2>
<div class="prose">${miniMarkdown(t.instructions)}</div>
</section>
<section>
<h2>Sample data</h2>
<pre class="code"><code>${h(sample)}</code></pre>
</section>
<section>
<details><summary>LaTeX source with placeholders</summary>
<pre class="code"><code>${h(t.latex_with_placeholders)}</code></pre>
</details>
</section>
<script src="/gallery/static/gallery.js" defer></script>`,
  });
}

export function notFoundPage(slug: string, baseUrl: string): string {
  return layout({
    title: 'No such template — Quire gallery',
    description: 'The template you asked for is not in the gallery.',
    canonical: `${baseUrl}/gallery`,
    body: `<div class="intro">
<h1>No such template</h1>
<p class="lede">The gallery has no template called <code>${h(slug)}</code>. <a href="/gallery">See all templates</a>.</p>
</div>`,
  });
}
