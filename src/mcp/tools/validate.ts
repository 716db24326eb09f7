// validate: POST /api/v1/validate as a tool, and with `template` POST /api/v2/templates/{id}/validate.
import { Type } from '@sinclair/typebox';
import { TemplateValidateBody, ValidateBody, ValidateResponse } from '../../compile/validate-schemas.js';
import { COMPILE_ASSET_NAMES } from '../../wire/json-safety.js';
import { callerOf, defineTool } from '../tool.js';
import { CompileArguments } from './compile.js';

const TemplateFields = {
  template: Type.Optional(
    Type.Union([Type.String(), Type.Integer({ minimum: 1 })], { description: 'A saved placeholder template (id or name): check `data` against its schema instead of a source' }),
  ),
  data: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'With `template`: the data a render would send' })),
  version: Type.Optional(TemplateValidateBody.properties.version),
};

export const validateTool = defineTool({
  name: 'validate',
  title: 'Check LaTeX before compiling (free)',
  description: [
    'Call before compile (or render) when unsure of a document: free, no quota, no TeX run.',
    'Returns `findings`, each with `severity` error (the compile would fail) or warning: plan and request problems with the error `code` compile would give, the template security policy (`placeholder_engine: "liquid"`), chktex warnings with `line`, packages and classes not installed here with `suggestions` (closest installed names), and files read by \\input/\\includegraphics/\\bibliography that the request does not carry.',
    'With `template` (id or name) and `data`: checks the data against that placeholder template schema (missing fields, wrong types). Fix every error finding, then compile.',
  ].join(' '),
  inputSchema: Type.Object({
    ...CompileArguments.properties,
    latex: Type.Optional(CompileArguments.properties.latex),
    placeholder_engine: Type.Optional(Type.Unsafe<'liquid'>({ type: 'string', enum: ['liquid'], description: ValidateBody.properties.placeholder_engine.description })),
    ...TemplateFields,
  }),
  // latex is optional here: a call with `template` checks data instead (the service requires latex otherwise).
  argumentSchema: Type.Object({ ...ValidateBody.properties, latex: Type.Optional(ValidateBody.properties.latex), ...TemplateFields }, { additionalProperties: true }),
  outputSchema: ValidateResponse,
  auth: 'optional',
  assetNames: COMPILE_ASSET_NAMES,
  public: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => {
    const { template, data, version, ...request } = args;
    if (template !== undefined) {
      return context.services.templateValidate.validate(callerOf(context), String(template), { data, ...(version !== undefined ? { version } : {}) });
    }
    return context.services.validate.validate(callerOf(context), { ...request, latex: request.latex });
  },
  summarize: (body) => {
    if (body.findings.length === 0) return `No problems found (checked: ${body.checked.join(', ')}).`;
    const head = body.valid ? 'Would compile; warnings:' : 'Would fail; fix the errors:';
    return [head, ...body.findings.map((f) => `- ${f.severity} ${f.kind}${f.line ? ` line ${f.line}` : ''}: ${f.message}`)].join('\n');
  },
});
