// Wire schemas of template versions (docs/api.md, "Template versions"), shared by the HTTP
// routes and the MCP tools.
import { Type } from '@sinclair/typebox';
import { TemplateV1 } from './schemas.js';

export { VersionNumber } from './schemas.js';

const Json = Type.Record(Type.String(), Type.Unknown());
const Engine = Type.Union([Type.Literal('none'), Type.Literal('liquid')]);

/** The template a version belongs to, with its latest version. */
const TemplateRef = Type.Object({ id: Type.Integer(), name: Type.String(), version: Type.Integer({ description: 'The latest version' }) });

export const TemplateVersionRow = Type.Object({
  version: Type.Integer(),
  placeholder_engine: Engine,
  latex_size_bytes: Type.Integer(),
  has_instructions: Type.Boolean(),
  latest: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});

export const TemplateVersionListResponse = Type.Object({
  template: TemplateRef,
  /** The plan's kept versions per template: older ones are pruned. */
  kept_limit: Type.Integer(),
  versions: Type.Array(TemplateVersionRow, { description: 'Newest first' }),
});

export const TemplateVersion = Type.Composite([
  TemplateVersionRow,
  Type.Object({
    latex_content: Type.String(),
    instructions: Type.Union([Type.String(), Type.Null()]),
    schema: Type.Union([Json, Type.Null()], { description: 'The data schema of a placeholder version; null for raw LaTeX' }),
    sample_data: Type.Union([Json, Type.Null()]),
  }),
]);

export const TemplateVersionResponse = Type.Object({ template: TemplateRef, version: TemplateVersion });

export const RestoreResponse = Type.Object({
  template: TemplateV1,
  restored_from: Type.Integer({ description: 'The version whose content is now the latest' }),
  schema: Type.Optional(Json),
  sample_data: Type.Optional(Json),
});
