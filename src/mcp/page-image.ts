// The first page image of a compile or render that asked for output.page_images, as an MCP
// `image` content block, so an agent sees the page it made (issue 23). Larger PNGs are not
// inlined: a text block gives the signed link instead.
import type { ContentBlock } from './results.js';
import type { Body, ToolContext } from './tool.js';

/** Largest PNG sent inline (bytes before base64). */
export const INLINE_IMAGE_MAX_BYTES = 150 * 1024;

interface PageImageRef {
  page: number;
  url: string;
  width: number;
  height: number;
}

export async function firstPageImage(body: Body, context: ToolContext): Promise<ContentBlock[]> {
  const images = body.page_images as PageImageRef[] | undefined;
  const first = images?.[0];
  if (!first || typeof body.job_id !== 'string') return [];
  const png = await context.services.pdfs.image(body.job_id, first.page);
  if (!png) return [{ type: 'text', text: `The image of page ${first.page} is no longer stored; its link: ${first.url}` }];
  if (png.length > INLINE_IMAGE_MAX_BYTES) {
    const kb = Math.ceil(png.length / 1024);
    return [{ type: 'text', text: `The image of page ${first.page} (${kb} KB) is over the ${INLINE_IMAGE_MAX_BYTES / 1024} KB inline limit; fetch it at ${first.url}` }];
  }
  return [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }];
}
