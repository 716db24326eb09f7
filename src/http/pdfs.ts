// GET/HEAD /api/v1/pdfs/{id}: a compiled PDF behind its signed link (no credentials).
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { pageImageId, verifyPdfLink } from '../compile/links.js';
import { errors as serviceErrors } from '../errors.js';
import type { Services } from '../services.js';
import type { App } from './types.js';

const Pdf = Type.String({ format: 'binary', contentMediaType: 'application/pdf' });
const PdfHeaders = {
  'Content-Length': Type.String({ pattern: '^[0-9]+$' }),
  'Accept-Ranges': Type.Literal('bytes'),
  'Cache-Control': Type.String({ description: 'private, max-age=<seconds until the link expires>' }),
  'Content-Disposition': Type.String({ description: 'inline; filename="<id>.pdf"' }),
};

const Query = Type.Object({
  sig: Type.Optional(Type.String({ description: 'HMAC signature, as given in pdf_url' })),
  exp: Type.Optional(Type.String({ description: 'Expiry (Unix seconds), as given in pdf_url' })),
});

/** One `bytes=` range of a `size`-byte file; undefined for none or an unsupported form, null when unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  return start > end || start >= size ? null : { start, end };
}

export function pdfRoutes(app: App, services: Services): void {
  app.get(
    '/api/v1/pdfs/:id',
    {
      config: { errors: ['invalid_signature', 'link_expired', 'not_found', 'range_not_satisfiable', 'storage_unavailable', 'database_unavailable'] },
      schema: {
        operationId: 'downloadPdf',
        summary: 'Download a compiled PDF through its signed link',
        description: 'Answers HEAD too. A `Range: bytes=…` header (one range) gives 206 with that part.',
        headers: Type.Object({ range: Type.Optional(Type.String({ description: 'One byte range, e.g. bytes=0-1023' })) }),
        tags: ['compile'],
        params: Type.Object({ id: Type.String() }),
        querystring: Query,
        response: {
          200: { description: 'The PDF', headers: PdfHeaders, content: { 'application/pdf': { schema: Pdf } } },
          206: {
            description: 'The requested byte range of the PDF',
            headers: { ...PdfHeaders, 'Content-Range': Type.String({ pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' }) },
            content: { 'application/pdf': { schema: Pdf } },
          },
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      verifyPdfLink(services.config.secret, id, req.query.exp, req.query.sig, services.clock.now());
      const row = await services.pdfs.find(id);
      if (!row) throw serviceErrors.not_found('No PDF with this id: it was deleted after its link expired.');
      const size = Number(row.size_bytes);
      const range = parseRange(req.headers.range, size);
      if (range === null) {
        throw serviceErrors.range_not_satisfiable(`The PDF has ${size} bytes.`, { size_bytes: size }, {
          'content-range': `bytes */${size}`,
        });
      }
      // A HEAD opens no download from the store (Fastify would read a stream to its end and discard it).
      const stream =
        req.method === 'HEAD' ? ((await services.pdfs.exists(id)) ? Readable.from([]) : null) : await services.pdfs.stream(id, range);
      if (!stream) throw serviceErrors.not_found('No PDF with this id.');
      const expires = new Date(row.expires_at);
      const maxAge = Math.max(0, Math.floor((expires.getTime() - services.clock.now().getTime()) / 1000));
      void reply
        .header('content-type', 'application/pdf')
        .header('accept-ranges', 'bytes')
        .header('cache-control', `private, max-age=${maxAge}`)
        .header('content-disposition', `inline; filename="${id}.pdf"`)
        .header('x-content-type-options', 'nosniff');
      if (range) {
        void reply
          .code(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
          .header('content-length', range.end - range.start + 1);
      } else {
        void reply.header('content-length', size);
      }
      // The reply type follows the JSON schemas; this one sends the PDF's bytes.
      return (reply as FastifyReply).send(stream);
    },
  );

  app.get(
    '/api/v1/pdfs/:id/pages/:page',
    {
      config: { errors: ['invalid_signature', 'link_expired', 'not_found', 'storage_unavailable', 'database_unavailable'] },
      schema: {
        operationId: 'downloadPageImage',
        summary: 'Download a page image of a compiled PDF through its signed link (extension: output.page_images)',
        tags: ['compile'],
        params: Type.Object({ id: Type.String(), page: Type.String({ pattern: '^[1-9][0-9]{0,5}\\.png$' }) }),
        querystring: Query,
        response: { 200: { description: 'The page as PNG', content: { 'image/png': { schema: Type.String({ format: 'binary', contentMediaType: 'image/png' }) } } } },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const page = Number(req.params.page.slice(0, -4));
      verifyPdfLink(services.config.secret, pageImageId(id, page), req.query.exp, req.query.sig, services.clock.now());
      const row = await services.pdfs.find(id);
      const png = row ? await services.pdfs.image(id, page) : null;
      if (!row || !png) throw serviceErrors.not_found('No image of this page: it was deleted after its link expired.');
      // The reply type follows the JSON schemas; this one sends the PNG's bytes.
      return (reply as FastifyReply).header('content-type', 'image/png').header('cache-control', 'private').header('x-content-type-options', 'nosniff').send(png);
    },
  );
}
