// Kept template versions as tools: list them and restore one. get_template and render take
// `version` themselves (templates.ts).
import { Type } from '@sinclair/typebox';
import { paidPlansPhrase } from '../../quota/prose.js';
import { RestoreResponse, TemplateVersionListResponse } from '../../templates/version-schemas.js';
import { VersionNumber } from '../../templates/schemas.js';
import { accountOf, defineTool } from '../tool.js';
import { ref, VersionedRef } from './templates.js';

const PAID = `Needs an API key on a paid plan (${paidPlansPhrase()}).`;

export const listTemplateVersionsTool = defineTool({
  name: 'list_template_versions',
  title: 'List the versions of a saved template',
  description: `Lists the kept versions of a saved template, newest first: each save that changes the source makes a version, kept with its schema, sample data and instructions; the plan keeps the newest \`kept_limit\`. Pass a \`version\` to get_template or render to read or render an older one; restore_template_version makes one the latest again. ${PAID}`,
  inputSchema: Type.Object({ id: VersionedRef.properties.id }),
  outputSchema: TemplateVersionListResponse,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, context) => context.services.templateVersions.list(accountOf(context), ref(args)),
  summarize: (body) =>
    [
      `Template ${body.template.name} (id ${body.template.id}): latest version ${body.template.version}, ${body.versions.length} kept (plan keeps ${body.kept_limit}).`,
      ...body.versions.map((v) => `- v${v.version}${v.latest ? ' (latest)' : ''}: ${v.latex_size_bytes} bytes, saved ${v.created_at}`),
    ].join('\n'),
});

export const restoreTemplateVersionTool = defineTool({
  name: 'restore_template_version',
  title: 'Restore a template version',
  description: `Makes the source and instructions of a kept version the new latest version of the template (latest + 1); older versions stay. Fails with template_version_not_found for a version not kept (see list_template_versions). ${PAID}`,
  inputSchema: Type.Object({ id: VersionedRef.properties.id, version: VersionNumber }),
  outputSchema: RestoreResponse,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (args, context) => context.services.templateVersions.restore(accountOf(context), ref(args), args.version),
  summarize: (body) => `Restored version ${body.restored_from} of ${body.template.name} as version ${body.template.version}.`,
});

export const templateVersionTools = [listTemplateVersionsTool, restoreTemplateVersionTool];
