// How a stored template row reads on the wire: V1 and V2 views, list rows, and the schema and
// sample data a Liquid template derived when it was saved.
import type { Static } from '@sinclair/typebox';
import type { TemplateRow } from '../storage/schema.js';
import type { JsonSchema } from './schema.js';
import type { TemplateListRow, TemplateV1, TemplateV2 } from './schemas.js';

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
    texlive: row.texlive ?? null,
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
