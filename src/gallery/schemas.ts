// Wire schemas of the public gallery, shared by the HTTP routes and the MCP tools.
import { checkedByService } from '../documented.js';
import { AsyncRequestFields } from '../jobs/async-fields.js';
import { Type } from '@sinclair/typebox';
import { CompileSuccessBody, OnErrorField, texliveField } from '../compile/schemas.js';
import { OutputBody } from '../compile/output-schema.js';
import { GALLERY_CATEGORIES } from './catalog.js';

export const GalleryEntryBody = Type.Object({
  slug: Type.String({ description: 'Stable identifier, e.g. invoice-classic' }),
  title: Type.String(),
  category: Type.Union(GALLERY_CATEGORIES.map((c) => Type.Literal(c))),
  summary: Type.String(),
  document: Type.String({ description: 'Designs with the same document take the same data' }),
  design: Type.String({ description: 'e.g. classic, modern' }),
  colors: Type.Array(Type.String(), { description: 'Accepted `color` values; the first is the default' }),
  default_color: Type.String(),
  compiler: Type.String({ description: 'Engine the template is typeset with' }),
  page_url: Type.String({ format: 'uri', description: 'Human page: preview, fields, sample data, try-it form' }),
  preview_url: Type.String({ format: 'uri', description: 'PNG of the first page (sample data, default color)' }),
  render_url: Type.String({ format: 'uri', description: 'POST {data, color?} here to get a PDF' }),
});

export const GalleryListBody = Type.Object({ templates: Type.Array(GalleryEntryBody) });

export const GalleryDetailBody = Type.Composite([
  GalleryEntryBody,
  Type.Object({
    schema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of `data`' }),
    sample_data: Type.Record(Type.String(), Type.Unknown(), { description: 'A complete valid example of `data`' }),
    instructions: Type.String({ description: 'How to fill the template (Markdown, written for agents)' }),
    latex_with_placeholders: Type.String({ description: 'The Liquid-templated LaTeX source' }),
  }),
]);

export const SlugParam = Type.Object({ slug: Type.String({ description: 'Template slug' }) });

/** Described loosely on purpose: the service checks it and answers with SPEC's codes. */
export const PublicRenderRequest = Type.Object(
  {
    data: Type.Optional(
      checkedByService(
        Type.Record(Type.String(), Type.Unknown(), { description: 'Required: an object matching the template schema (extra keys are ignored)' }),
      ),
    ),
    color: Type.Optional(checkedByService(Type.String({ description: "One of the template's colors; default the template's default", examples: ['blue'] }))),
    output: Type.Optional(OutputBody),
    texlive: texliveField(),
    on_error: OnErrorField,
    ...AsyncRequestFields,
  },
  {
    additionalProperties: true,
    examples: [{ data: { customer: { name: 'Ada Lovelace' } }, color: 'blue' }],
  },
);

/** The 200 body of a public render: CompileSuccess plus the template and the render's time. */
export const PublicRenderSuccessBody = Type.Composite(
  [
    CompileSuccessBody,
    Type.Object({
      render_time_ms: Type.Integer(),
      template: Type.Object({ slug: Type.String(), document: Type.String(), design: Type.String(), color: Type.String() }),
    }),
  ],
  { description: 'CompileSuccess plus render_time_ms and template' },
);
