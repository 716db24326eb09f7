// The public gallery: list, detail and render of the repository's templates. A render is the
// render pipeline of every template (templates/pipeline.ts): validate → fill the template (with
// the chosen color) → exactly the compile path, under the render wall clock.
import type { Static } from '@sinclair/typebox';
import type { Caller } from '../accounts/caller.js';
import { systemClock, type Clock } from '../clock.js';
import type { CompileContext } from '../compile/types.js';
import { errors } from '../errors.js';
import { RENDER_WALL_CLOCK_SECONDS } from '../quota/plans.js';
import { checkDataSize } from '../templates/data-size.js';
import { renderTemplate } from '../templates/liquid.js';
import { RenderPipeline, type RenderCompiler, type TemplateKind } from '../templates/pipeline.js';
import type { TexQueue } from '../queue/queue.js';
import type { GalleryTemplate } from './catalog.js';
import type { BlobStore } from '../storage/blobs.js';
import { GalleryPreviews, type PreviewImage } from './previews.js';
import type { GalleryDetailBody, GalleryEntryBody, PublicRenderSuccessBody } from './schemas.js';
import { dropBlankOptionals, jsonType, normaliseData, validateGalleryData } from './validate.js';

export interface GalleryLinks {
  page_url: string;
  preview_url: string;
  render_url: string;
}

export type GalleryEntry = Static<typeof GalleryEntryBody>;
export type GalleryDetail = Static<typeof GalleryDetailBody>;
export type GalleryRenderSuccess = Static<typeof PublicRenderSuccessBody>;

export interface GalleryDeps {
  templates: GalleryTemplate[];
  baseUrl: string;
  compiler: RenderCompiler;
  /** Runs the preview renderings (outside any quota). */
  texQueue: Pick<TexQueue, 'run'>;
  /** Where preview PNGs are kept (under `gallery-previews/`). */
  blobs: BlobStore;
  clock?: Clock;
}

/** Gallery templates: one message pointing at the schema and sample data, which GET returns. */
const GALLERY_TEMPLATE: TemplateKind = {
  via: 'public_render',
  validate: validateGalleryData,
  invalid: (problems) =>
    errors.schema_validation_failed('data does not match the template schema (GET the template for schema and sample_data)', {
      ...problems,
    }),
};

export class GalleryService {
  readonly templates: GalleryTemplate[];
  private readonly bySlug: Map<string, GalleryTemplate>;
  private readonly baseUrl: string;
  private readonly pipeline: RenderPipeline;
  private readonly previews: GalleryPreviews;

  constructor(deps: GalleryDeps) {
    this.templates = deps.templates;
    this.bySlug = new Map(deps.templates.map((t) => [t.slug, t]));
    this.baseUrl = deps.baseUrl;
    this.pipeline = new RenderPipeline(deps.clock ?? systemClock, deps.compiler, GALLERY_TEMPLATE, RENDER_WALL_CLOCK_SECONDS * 1000);
    this.previews = new GalleryPreviews(deps.blobs, deps.texQueue, async (t) => {
      return (await this.fill(t, t.sample_data, t.default_color)).latex;
    });
  }

  /** First page of the template from its sample data in its default color (PNG). */
  preview(slug: string): Promise<PreviewImage> {
    return this.previews.get(this.find(slug));
  }

  find(slug: string): GalleryTemplate {
    const template = this.bySlug.get(slug);
    if (!template) {
      throw errors.not_found(`No public template "${slug}". GET /api/v1/public_templates lists them.`, {
        slug,
      });
    }
    return template;
  }

  private links(slug: string): GalleryLinks {
    const base = this.baseUrl;
    return {
      page_url: `${base}/gallery/${slug}`,
      preview_url: `${base}/api/v1/public_templates/${slug}/preview.png`,
      render_url: `${base}/api/v1/public_templates/${slug}/render`,
    };
  }

  entry(t: GalleryTemplate): GalleryEntry {
    return {
      slug: t.slug,
      title: t.title,
      category: t.category,
      summary: t.summary,
      document: t.document,
      design: t.design,
      colors: t.colors,
      default_color: t.default_color,
      compiler: t.compiler,
      ...this.links(t.slug),
    };
  }

  list(): GalleryEntry[] {
    return this.templates.map((t) => this.entry(t));
  }

  detail(slug: string): GalleryDetail {
    const t = this.find(slug);
    return {
      ...this.entry(t),
      schema: t.schema,
      sample_data: t.sample_data,
      instructions: t.instructions,
      latex_with_placeholders: t.latex_with_placeholders,
    };
  }

  /** What the template sees of valid `data` in the named color. */
  private values(t: GalleryTemplate, data: Record<string, unknown>, color: string): Record<string, unknown> {
    const values = normaliseData(t.schema, data) as Record<string, unknown>;
    // theme last: caller data can never replace the palette value that reaches LaTeX.
    return { ...values, theme: { name: color, accent: t.palette[color] } };
  }

  /** The template filled with `data` (already validated) in the named color. */
  async fill(t: GalleryTemplate, data: Record<string, unknown>, color: string): Promise<{ latex: string; assets: string[] }> {
    return renderTemplate(t.latex_with_placeholders, this.values(t, data, color));
  }

  /**
   * Checks the request body's shape and color; returns the data (blank optionals dropped), the `output` object, the
   * `on_error` and the color to render with. The data, `output` and `on_error` are checked by the render pipeline.
   */
  check(t: GalleryTemplate, body: unknown): { data: Record<string, unknown>; color: string; output: unknown; onError: unknown } {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw errors.invalid_data('The body must be a JSON object: {"data": {...}, "color": "..."}', {
        got: jsonType(body),
      });
    }
    const { data, color, output, on_error: onError } = body as { data?: unknown; color?: unknown; output?: unknown; on_error?: unknown };
    if (data === undefined) {
      throw errors.invalid_data('`data` is required: an object matching the template schema', {
        missing_fields: ['data'],
      });
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw errors.invalid_data(`\`data\` must be a JSON object, got ${jsonType(data)}`, {
        expected: 'object',
        got: jsonType(data),
      });
    }
    checkDataSize(data);
    let chosen = t.default_color;
    if (color !== undefined && color !== null) {
      if (typeof color !== 'string' || !t.colors.includes(color)) {
        throw errors.invalid_color(`\`color\` must be one of ${t.colors.join(', ')} (default ${t.default_color})`,
          { colors: t.colors, default_color: t.default_color },
        );
      }
      chosen = color;
    }
    return { data: dropBlankOptionals(t.schema, data) as Record<string, unknown>, color: chosen, output, onError };
  }

  async render(caller: Caller, slug: string, body: unknown, hooks: Pick<CompileContext, 'onAccepted' | 'background'> = {}): Promise<GalleryRenderSuccess> {
    // Who is charged: the caller's own compile quota (keyless callers' per address), nothing else.
    const texlive = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { texlive?: unknown }).texlive : undefined;
    return this.pipeline.run(
      caller,
      async (texliveOf) => {
        const t = this.find(slug);
        // Gallery templates store no year: the request's, else the default, fixed before the data checks.
        texliveOf();
        const { data, color, output, onError } = this.check(t, body);
        return {
          source: t.latex_with_placeholders,
          schema: t.schema,
          data,
          values: (valid) => this.values(t, valid, color),
          compiler: t.compiler,
          template: { slug: t.slug, document: t.document, design: t.design, color },
          output,
          onError,
        };
      },
      hooks,
      texlive,
    );
  }
}
