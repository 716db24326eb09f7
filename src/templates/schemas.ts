// Wire schemas of the template endpoints (V1 raw templates, V2 placeholder templates), shared
// by the HTTP routes and the MCP tools. Field limits live in src/quota/plans.ts; the service
// enforces them too, so every door reports the same `fields` list.
import { checkedByService } from '../documented.js';
import { AsyncRequestFields } from '../jobs/async-fields.js';
import { Type, type Static } from '@sinclair/typebox';
import { CompileSuccessBody, OnErrorField, texliveField } from '../compile/schemas.js';
import { TEXLIVE_YEARS } from '../tex/image/releases.js';
import { OutputBody } from '../compile/output-schema.js';
import { TEMPLATE_DESCRIPTION_MAX, TEMPLATE_INSTRUCTIONS_MAX, TEMPLATE_NAME_MAX } from '../quota/plans.js';

const Name = Type.String({ minLength: 1, maxLength: TEMPLATE_NAME_MAX, description: 'Unique per account (case-insensitive)' });
const Description = Type.String({ maxLength: TEMPLATE_DESCRIPTION_MAX, description: 'Short human summary' });
// One JSON Schema type list rather than anyOf, so a too-long value gives one clear field error.
const Instructions = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  maxLength: TEMPLATE_INSTRUCTIONS_MAX,
  description: 'Markdown playbook for agents filling the template',
});
const Engine = checkedByService(
  Type.Union([Type.Literal('liquid'), Type.Literal('none')], {
    description: '`liquid` (placeholder template) or `none` (raw LaTeX); omit to keep the current kind',
  }),
);
const Json = Type.Record(Type.String(), Type.Unknown());
/**
 * The TeX Live year a template renders with unless the render names one (null clears it).
 * Checked by the service like compile's `texlive`: a year not served is texlive_not_available.
 */
const StoredTexlive = checkedByService(
  Type.Union([...TEXLIVE_YEARS.map((year) => Type.Literal(year)), Type.Null()], {
    description:
      "Extension of SPEC 1.5.0. TeX Live year renders of this template use when the render names none (null: the server's default, the newest); one this server serves. Omit to keep the current one.",
    examples: ['2024'],
  }),
);

export const SaveTemplateBody = Type.Object(
  {
    name: Name,
    latex_content: Type.Optional(Type.String({ description: 'LaTeX source; required for a new template' })),
    description: Type.Optional(Description),
    instructions: Type.Optional(Instructions),
    placeholder_engine: Type.Optional(Engine),
    texlive: Type.Optional(StoredTexlive),
  },
  { additionalProperties: false },
);
export type SaveTemplateInput = Static<typeof SaveTemplateBody>;

export const CreateV2Body = Type.Object(
  {
    name: Name,
    latex_with_placeholders: Type.String({ description: 'LaTeX with Liquid placeholders' }),
    description: Type.Optional(Description),
    instructions: Type.Optional(Instructions),
    texlive: Type.Optional(StoredTexlive),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'letter',
        latex_with_placeholders: '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\n\\end{document}\n',
        description: 'A one-line letter',
      },
    ],
  },
);
export type CreateV2Input = Static<typeof CreateV2Body>;

export const PatchV2Body = Type.Object(
  {
    name: Type.Optional(Name),
    latex_with_placeholders: Type.Optional(Type.String()),
    description: Type.Optional(Description),
    instructions: Type.Optional(Instructions),
    texlive: Type.Optional(StoredTexlive),
  },
  { additionalProperties: false },
);
export type PatchV2Input = Static<typeof PatchV2Body>;

export const PromoteBody = Type.Object(
  { latex_with_placeholders: Type.Optional(Type.String({ description: 'Defaults to the saved source' })) },
  { additionalProperties: false },
);
export type PromoteInput = Static<typeof PromoteBody>;

/** A kept version of a template (docs/api.md, "Template versions"). */
export const VersionNumber = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A kept version of the template (1, 2, …); omit for the latest' });

export const RenderBody = Type.Object(
  {
    data: Type.Optional(
      checkedByService(Type.Record(Type.String(), Type.Unknown(), { description: 'Object whose keys match the template schema; extra keys are ignored' })),
    ),
    version: Type.Optional(VersionNumber),
    output: Type.Optional(OutputBody),
    texlive: texliveField("the template's stored `texlive`, else the newest"),
    on_error: OnErrorField,
    ...AsyncRequestFields,
  },
  { additionalProperties: true, examples: [{ data: { name: 'Ada Lovelace', amount: 42 } }] },
);

const TemplateCommon = {
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  placeholder_engine: Type.Union([Type.Literal('none'), Type.Literal('liquid')]),
  version: Type.Integer(),
  latex_size_bytes: Type.Integer(),
  texlive: Type.Union([Type.String(), Type.Null()], { description: "Extension of SPEC 1.5.0: the TeX Live year renders use unless they name one; null: the server's default" }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

export const TemplateV1 = Type.Object({
  ...TemplateCommon,
  latex_content: Type.String(),
  instructions: Type.Union([Type.String(), Type.Null()]),
});

export const TemplateListRow = Type.Object({ ...TemplateCommon, has_instructions: Type.Boolean() });

export const TemplateV2 = Type.Object({
  ...TemplateCommon,
  latex_with_placeholders: Type.String(),
  instructions: Type.Union([Type.String(), Type.Null()]),
  schema: Json,
  sample_data: Json,
});

export const SaveTemplateResponse = Type.Object({
  template: TemplateV1,
  created: Type.Boolean(),
  promoted: Type.Optional(Type.Literal(true)),
  schema: Type.Optional(Json),
  sample_data: Type.Optional(Json),
});
export const TemplateListResponse = Type.Object({ templates: Type.Array(TemplateListRow) });
export const TemplateV1Response = Type.Object({ template: TemplateV1 });
export const TemplateV2Response = Type.Object({ template: TemplateV2, schema: Json, sample_data: Json });
export const PromoteResponse = Type.Object({
  template: TemplateV2,
  promoted: Type.Literal(true),
  schema: Json,
  sample_data: Json,
});

/** The 200 body of a V2 render: CompileSuccess plus the template and the render's time. */
export const RenderSuccessBody = Type.Composite(
  [
    CompileSuccessBody,
    Type.Object({
      render_time_ms: Type.Integer(),
      template: Type.Object({ id: Type.Integer(), name: Type.String(), version: Type.Integer() }),
    }),
  ],
  { description: 'CompileSuccess plus `template` and `render_time_ms`' },
);
