// A stored template row as the API shows it: the V1 view (`latex_content`), the V2 view
// (`latex_with_placeholders` with its derived schema and sample data) and the list row.
import type { Static } from '@sinclair/typebox';
import type { TemplateRow } from '../storage/schema.js';
import type { JsonSchema } from './schema.js';
import type { TemplateListRow, TemplateV1, TemplateV2 } from './schemas.js';

/** What a placeholder source yields besides itself: its JSON Schema and sample data. */
export interface Derived {
  schema: JsonSchema;
  sample_data: Record<string, unknown>;
}

type Engine = 'none' | 'liquid';

function engineOf(row: TemplateRow): Engine {
  return row.kind === 'liquid' ? 'liquid' : 'none';
}

function common(row: TemplateRow) {
  return {
    id: Number(row.id),
    name: row.name,
    description: row.description,
    placeholder_engine: engineOf(row),
    version: Number(row.version),
    latex_size_bytes: Buffer.byteLength(row.latex_content),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function derivedOf(row: TemplateRow): Derived {
  return {
    schema: row.schema_json ? (JSON.parse(row.schema_json) as JsonSchema) : {},
    sample_data: row.sample_data_json ? (JSON.parse(row.sample_data_json) as Record<string, unknown>) : {},
  };
}

export function v1View(row: TemplateRow): Static<typeof TemplateV1> {
  return { ...common(row), latex_content: row.latex_content, instructions: row.instructions };
}

export function listRow(row: TemplateRow): Static<typeof TemplateListRow> {
  return { ...common(row), has_instructions: row.instructions !== null && row.instructions !== '' };
}

export function v2View(row: TemplateRow): Static<typeof TemplateV2> {
  return { ...common(row), latex_with_placeholders: row.latex_content, instructions: row.instructions, ...derivedOf(row) };
}
