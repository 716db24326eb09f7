// The public gallery (/api/v1/public_templates) as tools: list, get, render.
import { Type } from '@sinclair/typebox';
import { GalleryDetailBody, GalleryListBody, PublicRenderRequest, PublicRenderSuccessBody, SlugParam } from '../../gallery/schemas.js';
import { TEXLIVE_YEARS } from '../../tex/image/releases.js';
import { firstPageImage } from '../page-image.js';
import { OnErrorArgument } from './compile.js';
import { pdfText } from '../results.js';
import { callerOf, defineTool } from '../tool.js';

const Slug = Type.String({ ...SlugParam.properties.slug, description: 'The template slug from list_public_templates, e.g. invoice-classic' });

export const listPublicTemplatesTool = defineTool({
  name: 'list_public_templates',
  title: 'List public templates',
  description:
    'Lists the public gallery: ready-made document templates (invoices, purchase orders, packing slips, delivery notes, receipts, reports, certificates, resumes, CVs, cover letters), each with slug, title, category, summary, document and design (designs of one document take the same data), accepted colors, and page, preview image and render URLs. No API key needed. Next: get_public_template for the data schema.',
  inputSchema: Type.Object({}),
  outputSchema: GalleryListBody,
  auth: 'none',
  public: true,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_args, context) => ({ templates: context.services.gallery.list() }),
  summarize: ({ templates }) => {
    return [
      `${templates.length} public templates (slug: title [category]; colors):`,
      ...templates.map((t) => `- ${t.slug}: ${t.title} [${t.category}]; ${t.colors.join(', ')}`),
    ].join('\n');
  },
});

export const getPublicTemplateTool = defineTool({
  name: 'get_public_template',
  title: 'Get a public template',
  description:
    'Fetches one public template by slug with what is needed to render it: `schema` (the JSON Schema of `data`), `sample_data` (a complete valid example to copy and adapt), `instructions` (how to fill it) and the Liquid source. Unknown slug: not_found (see list_public_templates). No API key needed.',
  inputSchema: Type.Object({ slug: Slug }),
  outputSchema: GalleryDetailBody,
  auth: 'none',
  public: true,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.gallery.detail(args.slug),
  summarize: (t) => {
    return [
      `${t.title} (${t.slug}, ${t.category}; colors ${t.colors.join(', ')}, default ${t.default_color}).`,
      `Instructions:\n${t.instructions}`,
      `Data schema:\n${JSON.stringify(t.schema)}`,
      `Sample data:\n${JSON.stringify(t.sample_data)}`,
    ].join('\n\n');
  },
});

export const renderPublicTemplateTool = defineTool({
  name: 'render_public_template',
  title: 'Render a public template',
  description:
    'Fills a public template with `data` and compiles it to a PDF; the result is like compile\'s (pdf_url to give the user) plus the template and render_time_ms. `data` must match the schema of get_public_template: a mismatch is schema_validation_failed with missing_fields and type_errors, invalid_data when data is not an object, invalid_color with the valid `colors`; none of these compile or cost quota. Values are escaped for LaTeX, so send plain text. `output` shapes the PDF as on compile (with page_images the first page comes back as an image). `texlive` picks the TeX Live year as on compile (default: the newest). `on_error` as on compile: "continue" returns a PDF TeX wrote despite recoverable errors, with them in `errors`. Works without an API key on the anonymous tier (daily limit) like compile; with a key the plan applies.',
  inputSchema: Type.Object({
    slug: Slug,
    data: Type.Object({}, { additionalProperties: true, description: PublicRenderRequest.properties.data.description }),
    color: Type.Optional(Type.String({ description: PublicRenderRequest.properties.color.description })),
    output: PublicRenderRequest.properties.output,
    texlive: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...TEXLIVE_YEARS], description: PublicRenderRequest.properties.texlive.description })),
    on_error: OnErrorArgument,
  }),
  // The route's body schema plus its path parameter: same checks, same codes as over HTTP.
  argumentSchema: Type.Object({ slug: Slug, ...PublicRenderRequest.properties }, { additionalProperties: true }),
  outputSchema: PublicRenderSuccessBody,
  auth: 'optional',
  public: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  job: 'public_render',
  run: (args, context, hooks) => {
    const { slug, ...body } = args;
    return context.services.gallery.render(callerOf(context), slug, body, hooks);
  },
  summarize: (body) => `Rendered ${body.template.slug} in ${body.template.color}.\n${pdfText(body)}`,
  attachments: firstPageImage,
});

export const galleryTools = [listPublicTemplatesTool, getPublicTemplateTool, renderPublicTemplateTool];
