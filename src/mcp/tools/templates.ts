// Saved templates as tools: the V1 API (list, get, save, delete) and the V2 render.
import { paidPlansPhrase } from '../../quota/prose.js';
import { Type, type Static } from '@sinclair/typebox';
import { IdParam } from '../../wire/schemas.js';
import { TEMPLATE_DESCRIPTION_MAX, TEMPLATE_INSTRUCTIONS_MAX, TEMPLATE_NAME_MAX } from '../../quota/plans.js';
import {
  RenderBody,
  RenderSuccessBody,
  SaveTemplateBody,
  SaveTemplateResponse,
  TemplateListResponse,
  TemplateListRow,
  TemplateV1,
  TemplateV1Response,
  VersionNumber,
} from '../../templates/schemas.js';
import { TEXLIVE_YEARS } from '../../tex/image/releases.js';
import { firstPageImage } from '../page-image.js';
import { OnErrorArgument } from './compile.js';
import { pdfText } from '../results.js';
import { accountOf, defineTool } from '../tool.js';

const PAID = `Needs an API key on a paid plan (${paidPlansPhrase()}).`;

/** The routes' `{id}` path parameter; a number is accepted too, as lists report ids as numbers. */
const id = Type.Union([Type.String({ ...IdParam.properties.id, description: 'Name, or numeric id as text' }), Type.Integer({ minimum: 1 })], {
  description: 'Numeric id or name of the template (names match case-insensitively)',
});
const TemplateRef = Type.Object({ id });
export const VersionedRef = Type.Object({ id, version: Type.Optional(VersionNumber) });

export function ref(args: { id: string | number }): string {
  return String(args.id);
}

const Json = Type.Record(Type.String(), Type.Unknown());

/** A template as the list shows it, or as get and save return it. */
type TemplateView = Static<typeof TemplateListRow> | Static<typeof TemplateV1>;

function line(t: TemplateView): string {
  const kind = t.placeholder_engine === 'liquid' ? 'placeholder template (render it)' : 'raw LaTeX (compile it)';
  const instructions = 'has_instructions' in t ? t.has_instructions : false;
  return `${t.name} (id ${t.id}, ${kind}, v${t.version}, ${t.latex_size_bytes} bytes${instructions ? ', has instructions' : ''})${t.description ? `: ${t.description}` : ''}`;
}

const DeletedTemplate = Type.Object({ deleted: Type.Literal(true), id: Type.String() });

export const listTemplatesTool = defineTool({
  name: 'list_templates',
  title: 'List saved templates',
  description: `Lists the account's saved templates: id, name, description, kind (placeholder_engine "none" = raw LaTeX, "liquid" = placeholder template to render with data), version, size, and has_instructions (true when the template carries a playbook for agents; read it with get_template before using the template). Source is not included. ${PAID}`,
  inputSchema: Type.Object({}),
  outputSchema: TemplateListResponse,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_args, context) => context.services.templates.list(accountOf(context)),
  summarize: ({ templates }) => {
    return [`${templates.length} saved template(s).`, ...templates.map((t) => `- ${line(t)}`)].join('\n');
  },
});

export const getTemplateTool = defineTool({
  name: 'get_template',
  title: 'Get a saved template',
  description: `Fetches one saved template by numeric id or name with its LaTeX source (latex_content) and its instructions (null when none). Follow the instructions when using it. A raw template is used by editing the source and calling compile; a placeholder template (placeholder_engine "liquid") is used with render, and this result then also carries its data \`schema\` and \`sample_data\`. \`version\` fetches a kept version (list_template_versions) instead of the latest. Fails with not_found for an unknown id or name (see list_templates). ${PAID}`,
  inputSchema: VersionedRef,
  outputSchema: Type.Composite([TemplateV1Response, Type.Object({ schema: Type.Optional(Json), sample_data: Type.Optional(Json) })]),
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => {
    const caller = accountOf(context);
    const body = await context.services.templates.getV1(caller, ref(args));
    if (args.version !== undefined && args.version !== body.template.version) {
      // A kept version: its own source, instructions and schema, under the template's id and name.
      const { version: kept } = await context.services.templateVersions.get(caller, ref(args), args.version);
      const template = { ...body.template, placeholder_engine: kept.placeholder_engine, version: kept.version, latex_content: kept.latex_content, latex_size_bytes: kept.latex_size_bytes, instructions: kept.instructions };
      return { template, ...(kept.schema && kept.sample_data ? { schema: kept.schema, sample_data: kept.sample_data } : {}) };
    }
    if (body.template.placeholder_engine !== 'liquid') return body;
    // What render needs to know, from the V2 view of the same template.
    const v2 = await context.services.templates.getV2(caller, String(body.template.id));
    return { ...body, schema: v2.schema, sample_data: v2.sample_data };
  },
  summarize: (body) => {
    const t = body.template;
    const parts = [`Template ${line(t)}.`];
    if (t.instructions) parts.push(`Instructions:\n${t.instructions}`);
    if (body.schema) parts.push(`Data schema for render:\n${JSON.stringify(body.schema)}`);
    parts.push(`Source:\n${t.latex_content}`);
    return parts.join('\n\n');
  },
});

export const SaveTemplateArguments = Type.Object(
  {
    ...SaveTemplateBody.properties,
    placeholder_engine: Type.Optional(
      Type.Unsafe<'liquid' | 'none'>({
        type: 'string',
        enum: ['liquid', 'none'],
        description: SaveTemplateBody.properties.placeholder_engine.description,
      }),
    ),
    texlive: Type.Optional(
      Type.Unsafe<string | null>({ type: ['string', 'null'], enum: [...TEXLIVE_YEARS, null], description: SaveTemplateBody.properties.texlive.description }),
    ),
  },
  { additionalProperties: false },
);

export const saveTemplateTool = defineTool({
  name: 'save_template',
  title: 'Save a template',
  description: `Saves a LaTeX template under \`name\` (upsert: a new name creates it, an existing name, any case, updates it; fields left out keep their value). latex_content is required for a new template and must fit the plan's source limit; name at most ${TEMPLATE_NAME_MAX} characters, description ${TEMPLATE_DESCRIPTION_MAX}, instructions ${TEMPLATE_INSTRUCTIONS_MAX} (markdown for the agents who will use it). Source with Liquid placeholders ({{ }} / {% %}) needs placeholder_engine "liquid"; it is then checked against the security policy and rendered with render. \`texlive\` stores the TeX Live year its renders use when they name none (null: the newest). The plan caps the number of templates (see usage). On validation_failed the \`fields\` list names each bad field. ${PAID}`,
  inputSchema: SaveTemplateArguments,
  argumentSchema: SaveTemplateBody,
  outputSchema: SaveTemplateResponse,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.templates.saveV1(accountOf(context), args),
  summarize: (body) => {
    const t = body.template;
    const what = body.created ? 'Created' : body.promoted ? 'Updated and converted to a placeholder template:' : 'Updated';
    return `${what} template ${line(t)}.`;
  },
});

export const deleteTemplateTool = defineTool({
  name: 'delete_template',
  title: 'Delete a saved template',
  description: `Deletes one saved template by numeric id or name; this cannot be undone. Fails with not_found for an unknown id or name. ${PAID}`,
  inputSchema: TemplateRef,
  outputSchema: DeletedTemplate,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async (args, context): Promise<Static<typeof DeletedTemplate>> => {
    await context.services.templates.delete(accountOf(context), ref(args));
    return { deleted: true, id: ref(args) };
  },
  summarize: (body) => `Deleted template ${body.id}.`,
});

export const renderTool = defineTool({
  name: 'render',
  title: 'Render a placeholder template',
  description: `Fills a saved placeholder template (placeholder_engine "liquid") with \`data\` and compiles it to a PDF; the result is like compile's, plus the template and render_time_ms. \`data\` must match the template schema (get_template shows it, with sample_data): a mismatch is schema_validation_failed with missing_fields and type_errors, checked before anything compiles and not charged. Values are escaped for LaTeX, so send plain text. Check data for free first with validate (\`template\`, \`data\`). A failed render reads like a failed compile: apply \`diagnosis.suggested_fix\` and retry. Stored assets the template names are used automatically. \`version\` renders a kept version (see list_template_versions); the latest by default. \`output\` shapes the PDF as on compile (with page_images the first page comes back as an image). \`texlive\` picks the TeX Live year (default: the template's own \`texlive\`, else the newest); a year this server does not serve is texlive_not_available with the \`available\` ones, not charged. With \`on_error: "continue"\` a rendered document whose TeX errors were recoverable still returns its PDF (charged) with the errors in \`errors\` (file, line, message). Counts toward the monthly compilations; a few renders per minute at most; 60 s per call. A raw template gives template_engine_mismatch: compile its source instead. ${PAID}`,
  inputSchema: Type.Object({
    id,
    data: Type.Object({}, { additionalProperties: true, description: RenderBody.properties.data.description }),
    version: Type.Optional(VersionNumber),
    output: RenderBody.properties.output,
    texlive: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...TEXLIVE_YEARS], description: RenderBody.properties.texlive.description })),
    on_error: OnErrorArgument,
  }),
  argumentSchema: Type.Object({ id, ...RenderBody.properties }, { additionalProperties: true }),
  outputSchema: RenderSuccessBody,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  job: 'render',
  run: (args, context, hooks) =>
    context.services.templates.render(accountOf(context), ref(args), args.data, hooks, { version: args.version, output: args.output, texlive: args.texlive, onError: args.on_error }),
  summarize: (body) => `Rendered template ${body.template.name} (v${body.template.version}).\n${pdfText(body)}`,
  attachments: firstPageImage,
});

export const templateTools = [renderTool, listTemplatesTool, getTemplateTool, saveTemplateTool, deleteTemplateTool];
