// Wire schemas of validate (docs/api.md, "Validate"): the compile request body in, findings
// out. Shared by POST /api/v1/validate, POST /api/v2/templates/{id}/validate and MCP `validate`.
import { Type } from '@sinclair/typebox';
import { checkedByService } from '../documented.js';
import { CompileInputBody } from './schemas.js';

export const FINDING_KINDS = ['request', 'template', 'chktex', 'missing_package', 'missing_class', 'missing_file', 'data'] as const;

export const ValidateBody = Type.Object(
  {
    ...CompileInputBody.properties,
    placeholder_engine: Type.Optional(
      checkedByService(
        Type.Union([Type.Literal('none'), Type.Literal('liquid')], {
          description: '`liquid`: check the source as a placeholder template too (security policy, Liquid syntax)',
        }),
      ),
    ),
  },
  { additionalProperties: true, description: 'A compile request body (latex, compiler, assets, use_stored_assets, files)' },
);

export const ValidateFinding = Type.Object({
  kind: Type.Union(FINDING_KINDS.map((k) => Type.Literal(k)), {
    description:
      'request: a plan or request rule the compile would refuse (see `code`); template: the template security policy or Liquid syntax; chktex: a chktex warning; missing_package / missing_class: not installed here (see `suggestions`); missing_file: \\input, \\include, \\includegraphics or a bibliography the request does not carry; data: `data` against a placeholder template schema',
  }),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')], { description: 'error: the compile (or render) would fail; warning: it would compile' }),
  message: Type.String(),
  code: Type.Optional(Type.String({ description: 'The error code the compile or render would answer with (docs/errors.md)' })),
  line: Type.Optional(Type.Integer({ description: 'Line in the file (main.tex unless `file` says otherwise)' })),
  column: Type.Optional(Type.Integer()),
  file: Type.Optional(Type.String({ description: 'The file the line is in, when not main.tex' })),
  name: Type.Optional(Type.String({ description: 'The package, class, file or data field concerned' })),
  suggestions: Type.Optional(Type.Array(Type.String(), { description: 'Closest installed names, nearest first' })),
  chktex: Type.Optional(Type.Integer({ description: 'chktex warning number' })),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The error body the compile would answer with' })),
});

export const ValidateResponse = Type.Object({
  valid: Type.Boolean({ description: 'No finding of severity error: the compile is expected to succeed (TeX may still fail)' }),
  findings: Type.Array(ValidateFinding),
  checked: Type.Array(Type.String(), { description: 'The checks that ran' }),
});

export const TemplateValidateBody = Type.Object(
  {
    data: Type.Optional(checkedByService(Type.Record(Type.String(), Type.Unknown(), { description: 'The data a render would send' }))),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A kept version; the latest by default' })),
  },
  { additionalProperties: false },
);
