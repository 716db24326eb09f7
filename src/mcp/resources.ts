// MCP resources: read-only context an agent can pull in before writing a document — a guide to
// writing for Quire, the plan limits, and the public gallery (each template's schema, sample
// data, instructions and Liquid source).
import { isServiceError } from '../errors.js';
import { SIZE_PREVIEW_MAX_BYTES, PLANS, type Tier } from '../quota/plans.js';
import { RpcError } from './jsonrpc.js';
import { GUIDE } from './guide.js';

/** MCP's "resource not found" error code. */
export const RESOURCE_NOT_FOUND = -32002;

export interface Resource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export interface ResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

/** What the resources need from the public gallery (GalleryService). */
export interface GallerySource {
  list(): Array<{ slug: string; title: string; summary: string; category: string }>;
  detail(slug: string): object;
}

const GALLERY_PREFIX = 'quire://gallery/';

function limitsDocument(): object {
  const tiers: Tier[] = ['anonymous', 'free', 'starter', 'pro', 'business'];
  return {
    size_preview_max_bytes: SIZE_PREVIEW_MAX_BYTES,
    plans: Object.fromEntries(
      tiers.map((tier) => {
        const l = PLANS[tier];
        return [
          tier,
          {
            compilations_per_period: l.compilesPerPeriod,
            period: l.period,
            saved_templates: l.templates,
            kept_template_versions: l.templateVersions,
            max_pages_per_document: l.maxPages,
            max_latex_bytes_per_document: l.maxLatexBytes,
            max_pdf_bytes_per_document: l.maxPdfBytes,
            max_assets_count_per_document: l.maxAssetsPerDocument,
            max_assets_total_bytes_per_document: l.maxAssetsBytesPerDocument,
            compile_timeout_seconds: l.compileTimeoutSeconds,
            allowed_compilers: l.compilers,
            max_stored_assets_count: l.maxStoredAssets,
            max_stored_assets_total_bytes: l.maxStoredAssetsBytes,
            pdf_link_seconds: l.pdfLinkSeconds,
          },
        ];
      }),
    ),
  };
}

export class Resources {
  constructor(private readonly gallery: GallerySource) {}

  async list(): Promise<Resource[]> {
    const fixed: Resource[] = [
      {
        uri: 'quire://guide',
        name: 'guide',
        title: 'Writing LaTeX for Quire',
        description: 'How to write documents that compile here, how to read failures, and how to fix them.',
        mimeType: 'text/markdown',
      },
      {
        uri: 'quire://limits',
        name: 'limits',
        title: 'Plan limits',
        description: 'Every per-plan limit: pages, source size, assets, compilers, timeouts, monthly compilations.',
        mimeType: 'application/json',
      },
    ];
    return [
      ...fixed,
      ...this.gallery.list().map((t) => ({
        uri: `${GALLERY_PREFIX}${t.slug}`,
        name: t.slug,
        title: t.title,
        description: `Public template (${t.category}): ${t.summary} Holds its JSON schema, sample data, instructions and Liquid source.`,
        mimeType: 'application/json',
      })),
    ];
  }

  templates(): Array<Record<string, string>> {
    return [
      {
        uriTemplate: `${GALLERY_PREFIX}{slug}`,
        name: 'public_template',
        title: 'Public template',
        description: 'A public gallery template by slug: schema, sample_data, instructions, latex_with_placeholders.',
        mimeType: 'application/json',
      },
    ];
  }

  async read(uri: string): Promise<ResourceContents[]> {
    if (uri === 'quire://guide') return [{ uri, mimeType: 'text/markdown', text: GUIDE }];
    if (uri === 'quire://limits') {
      return [{ uri, mimeType: 'application/json', text: JSON.stringify(limitsDocument(), null, 2) }];
    }
    if (uri.startsWith(GALLERY_PREFIX)) {
      const slug = decodeURIComponent(uri.slice(GALLERY_PREFIX.length));
      try {
        return [{ uri, mimeType: 'application/json', text: JSON.stringify(this.gallery.detail(slug), null, 2) }];
      } catch (err) {
        if (!isServiceError(err)) throw err;
      }
    }
    throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}; resources/list names the available ones`, { uri });
  }
}
