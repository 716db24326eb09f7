// compile: POST /api/v1/compile as a tool, through the same service call and quota.
import { Type } from '@sinclair/typebox';
import { CompileRequestBody, CompileSuccessBody } from '../../compile/schemas.js';
import { COMPILE_ASSET_NAMES } from '../../wire/json-safety.js';
import { TEXLIVE_YEARS } from '../../tex/image/releases.js';
import { ASSET_EXTENSIONS, COMPILERS, PLANS, type Compiler } from '../../quota/plans.js';
import { OutputBody } from '../../compile/output-schema.js';
import { firstPageImage } from '../page-image.js';
import { pdfText } from '../results.js';
import { callerOf, defineTool } from '../tool.js';

const request = CompileRequestBody.properties;
const anon = PLANS.anonymous;

/** `on_error` as agents see it on compile and on both render tools (checked by the service, compile/rules.ts). */
export const OnErrorArgument = Type.Optional(
  Type.Unsafe<'stop' | 'continue'>({ type: 'string', enum: ['stop', 'continue'], default: 'stop', description: request.on_error.description }),
);

/**
 * The route's fields with their real types spelled out for agents. Arguments are still checked
 * with the route's own (deliberately loose) schema, so a bad value gets the same SPEC code
 * (invalid_stored_assets_shape, not_latex_source, ...) as over HTTP.
 */
export const CompileArguments = Type.Object(
  {
    latex: Type.String({ description: request.latex.description }),
    compiler: Type.Optional(
      Type.Unsafe<Compiler>({ type: 'string', enum: [...COMPILERS], default: 'pdflatex', description: request.compiler.description }),
    ),
    texlive: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...TEXLIVE_YEARS], description: request.texlive.description })),
    assets: Type.Optional(
      Type.Object({}, { additionalProperties: Type.String({ contentEncoding: 'base64' }), description: request.assets.description }),
    ),
    use_stored_assets: Type.Optional(Type.Array(Type.String(), { description: request.use_stored_assets.description })),
    files: Type.Optional(Type.Object({}, { additionalProperties: Type.String(), description: request.files.description })),
    output: Type.Optional(OutputBody),
    on_error: OnErrorArgument,
  },
);

export const compileTool = defineTool({
  name: 'compile',
  title: 'Compile LaTeX to PDF',
  description: [
    'Compiles a complete LaTeX document and returns `pdf_url`, a signed link to the PDF that works without credentials until `expires_at`; give it to the user.',
    `Without an API key: pdflatex only, ${anon.maxPages} pages, ${anon.maxLatexBytes / 1024} KB of source, no assets, ${anon.compilesPerPeriod} successful compiles per day.`,
    'With a key the plan decides pages, source size, compilers and assets (see the `usage` tool).',
    `Images go in \`assets\` (file name → base64 of ${ASSET_EXTENSIONS.join('/')}) or \`use_stored_assets\` (names in the library), then \\includegraphics{name}. No shell escape.`,
    'A multi-file project sends its other text files in `files` (relative name → text, e.g. {"chapters/intro.tex": "...", "refs.bib": "..."}); \\input, \\include, \\bibliography and \\addbibresource find them. bibtex, biber, makeindex (every index), glossaries and nomencl run as needed.',
    'When unsure the document compiles here (packages, files, plan limits), call `validate` first: it is free and runs no TeX.',
    'On failure (isError, `compilation_failed`) read `diagnosis`: `error_class` says what broke, `line` where, `suggested_fix` (and `suggested_package`) what to change. Fixes are mechanical: apply `suggested_fix` to the source and call compile again with the whole document. Failed compiles cost no quota.',
    'With `on_error: "continue"` a document whose TeX errors were recoverable still returns its PDF with the errors in `errors` (file, line, message); fix them as you would a diagnosis.',
    '`output` shapes the PDF (PDF/A, metadata, encryption, watermark, embedded files); with `output.page_images` the first page comes back as an image so you can check the layout.',
    '`warnings` on a success lists what the document could still fix (undefined references and citations, bibliography errors, missing glyphs), each with `line` and a `fix` to apply the same way; relay any `warning` (grace quota, truncated preview) to the user.',
  ].join(' '),
  inputSchema: CompileArguments,
  argumentSchema: CompileRequestBody,
  outputSchema: CompileSuccessBody,
  auth: 'optional',
  assetNames: COMPILE_ASSET_NAMES,
  public: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  job: 'compile',
  run: (args, context, hooks) => context.services.compile.compile(callerOf(context), args, { via: 'mcp', ...hooks }),
  summarize: pdfText,
  attachments: firstPageImage,
});
