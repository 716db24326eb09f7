// Wire schemas of compile (SPEC §2.1–2.3), shared by the HTTP route and the MCP tool.
// Field types are loose on purpose where SPEC names its own error code for a bad value
// (the service checks them), so a schema never pre-empts that code with validation_failed.
import { checkedByService } from '../documented.js';
import { AsyncRequestFields } from '../jobs/async-fields.js';
import { Type } from '@sinclair/typebox';
import { COMPILERS } from '../tex/compilers.js';
import { DiagnosisBody } from '../tex/diagnosis/diagnosis.js';
import { TEXLIVE_YEARS } from '../tex/image/releases.js';
import { TexErrorBody, TexWarningBody } from '../tex/warnings.js';
import { ConformanceBody, OutputBody, PageImageBody } from './output-schema.js';

/**
 * The optional `texlive` field of a request that compiles (compile, renders, batch), checked by
 * the compile service (CompileService.texliveYear) so every door refuses a year it does not
 * serve with texlive_not_available. `fallback` says what runs when it is left out.
 */
export function texliveField(fallback = 'the newest') {
  return Type.Optional(
    checkedByService(
      Type.Union(
        TEXLIVE_YEARS.map((year) => Type.Literal(year)),
        { description: `Extension of SPEC 1.5.0. TeX Live year, as installed on this server (default: ${fallback})`, examples: ['2026'] },
      ),
    ),
  );
}

/**
 * `on_error` of compile and of every render (V2, public, batch): checked once by the service
 * (compile/rules.ts parseOnError), so each door answers a bad value with the same validation_failed.
 */
export const OnErrorField = Type.Optional(
  checkedByService(
    Type.Union([Type.Literal('stop'), Type.Literal('continue')], {
      description:
        'Extension of SPEC 1.5.0. "stop" (default): a TeX error is SPEC\'s 422 compilation_failed with a diagnosis. "continue": TeX goes on past errors (Overleaf\'s "try to compile despite errors"); a PDF it still writes is delivered (200, charged) with the errors in `errors`; no PDF is the same 422. See docs/projects-and-warnings.md.',
      examples: ['continue'],
    }),
  ),
);

/** The fields of a compile request the compile service reads (async ones are the job door's). */
const CompileFields = {
  // Optional in the schema only because project_zip may replace it; the service requires one of them.
  latex: Type.Optional(
    checkedByService(
      Type.String({ description: 'Complete LaTeX source, required unless project_zip is sent. Must contain \\documentclass, \\begin{document}, \\input{} or \\include{}.' }),
    ),
  ),
  compiler: Type.Optional(
    checkedByService(
      Type.Union(
        COMPILERS.map((c) => Type.Literal(c)),
        { description: 'pdflatex (default), xelatex (any account) or lualatex (Pro, Business)', examples: ['pdflatex'] },
      ),
    ),
  ),
  assets: Type.Optional(
    checkedByService(
      Type.Record(Type.String(), Type.String({ contentEncoding: 'base64' }), {
        description: 'Map of filename to base64 bytes (png, jpg, jpeg, pdf, svg, eps, ps, otf, ttf, ttc). Needs an API key.',
      }),
    ),
  ),
  use_stored_assets: Type.Optional(
    checkedByService(Type.Array(Type.String(), { description: "Names of assets in the account's library. Paid plans." })),
  ),
  texlive: texliveField(),
  files: Type.Optional(
    checkedByService(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Object({ base64: Type.String({ contentEncoding: 'base64' }) })]), {
        description:
          'Extension of SPEC 1.5.0. The other files of a multi-file project: map of relative path (up to 16 folders and 1,024 bytes, e.g. "chapters/part1/intro.tex") to UTF-8 text (any extension; counts toward the source limit) or {"base64": "…"} for a binary file of an asset type (figures/plot.png, fonts/Brand.otf, figures/fig1.eps; counted as assets). See docs/projects-and-warnings.md.',
      }),
    ),
  ),
  project_zip: Type.Optional(
    checkedByService(
      Type.String({
        contentEncoding: 'base64',
        description:
          'Extension of SPEC 1.5.0. A whole project as the base64 of a zip, instead of latex and files: main.tex at the top, or the one top-level .tex with \\documentclass, is the main file. Bounded entries, sizes and ratio; no links, absolute or ".." paths. See docs/projects-and-warnings.md.',
      }),
    ),
  ),
  output: Type.Optional(OutputBody),
  on_error: OnErrorField,
};

/** What every door hands the compile service (see CompileInput in types.ts). */
export const CompileInputBody = Type.Object(CompileFields, { additionalProperties: true });

export const CompileRequestBody = Type.Object(
  { ...CompileFields, ...AsyncRequestFields },
  {
    additionalProperties: true,
    description: 'CompileRequest',
    examples: [{ latex: '\\documentclass{article}\n\\begin{document}\nHello, Quire.\n\\end{document}\n', compiler: 'pdflatex' }],
  },
);

export const NextStepBody = Type.Object({
  action: Type.String(),
  signup_url: Type.Optional(Type.String({ format: 'uri' })),
  env_var: Type.Optional(Type.String()),
  header: Type.Optional(Type.String()),
  remove_fields: Type.Optional(Type.Array(Type.String())),
  card_required: Type.Optional(Type.Boolean()),
});

/** Extension of SPEC 1.5.0: a problem in a document that compiled (declared by tex/, which finds them). */
export const CompileWarning = TexWarningBody;
/** Extension of SPEC 1.5.0: an error TeX recovered from (on_error "continue"). */
export const CompileError = TexErrorBody;

export const CompileSuccessBody = Type.Object(
  {
    job_id: Type.String({ format: 'uuid' }),
    pdf_url: Type.String({ format: 'uri', description: 'Signed link, fetchable without credentials until expires_at' }),
    expires_at: Type.String({ format: 'date-time' }),
    pages: Type.Integer(),
    compilation_time_ms: Type.Integer(),
    compiler: Type.String(),
    texlive: Type.String({ description: 'Extension of SPEC 1.5.0: the TeX Live year that ran ("host" with QUIRE_SANDBOX=off)' }),
    assets_count: Type.Integer(),
    ephemeral_assets_used: Type.Array(Type.String()),
    stored_assets_used: Type.Array(Type.String()),
    studio_url: Type.Optional(Type.String({ format: 'uri' })),
    anonymous: Type.Optional(Type.Boolean()),
    remaining_today: Type.Optional(Type.Integer()),
    note: Type.Optional(Type.String()),
    next_step: Type.Optional(NextStepBody),
    usage: Type.Object({}, { additionalProperties: true }),
    quota_grace: Type.Optional(Type.Boolean()),
    grace_remaining: Type.Optional(Type.Integer()),
    warning: Type.Optional(Type.String()),
    preview: Type.Optional(Type.Boolean()),
    truncated: Type.Optional(Type.Boolean()),
    total_pages: Type.Optional(Type.Integer()),
    plan_required: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    upgrade_url: Type.Optional(Type.String({ format: 'uri' })),
    page_images: Type.Optional(Type.Array(PageImageBody, { description: 'Extension of SPEC 1.5.0: with output.page_images, the rendered pages' })),
    conformance: Type.Optional(ConformanceBody),
    warnings: Type.Array(CompileWarning, {
      description: 'Extension of SPEC 1.5.0: undefined references and citations, bibliography errors and missing databases that did not stop delivery, missing glyphs. Empty when there are none.',
    }),
    errors: Type.Optional(
      Type.Array(CompileError, {
        description: 'Extension of SPEC 1.5.0: with on_error "continue", the TeX errors the delivered PDF was made despite (file, line, message), in order. Empty when there were none.',
      }),
    ),
  },
  { description: 'CompileSuccess' },
);

export const CompileFailureBody = Type.Object(
  {
    error: Type.String(),
    message: Type.String(),
    log: Type.Optional(Type.String({ description: 'End of the compiler transcript (at most 64 KiB)' })),
    line: Type.Optional(Type.Integer()),
    retryable: Type.Optional(Type.Boolean()),
    diagnosis: Type.Optional(DiagnosisBody),
    agent_hint: Type.Optional(Type.String()),
    plan: Type.Optional(Type.String()),
    usage: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'As in CompileSuccess: the counters after this failure, which cost nothing' })),
  },
  { additionalProperties: true, description: 'CompileFailure' },
);
