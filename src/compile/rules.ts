// Request rules checked before anything costs a slot (SPEC §2.1, §7.1).
import { errors, invalidField } from '../errors.js';
import { checkProjectFiles, type ProjectFiles } from './files.js';
import { expandProjectZip } from './project-zip.js';
import { SIZE_PREVIEW_MAX_BYTES, isCompiler, limitsOf, smallestPlan, type Compiler, type Tier } from '../quota/plans.js';

export const LATEX_MARKERS = ['\\documentclass', '\\begin{document}', '\\input{', '\\include{'];

export const EXAMPLE_TEMPLATE = '\\documentclass{article}\n\\begin{document}\nHello, world.\n\\end{document}\n';

/** `on_error`: what a TeX error does. "stop" is SPEC's 422; "continue" delivers a PDF TeX wrote despite errors. */
export type OnError = 'stop' | 'continue';

/** The `on_error` field of a compile or render request: absent is "stop"; anything else but the two is validation_failed. */
export function parseOnError(value: unknown): OnError {
  if (value === undefined || value === 'stop' || value === 'continue') return value ?? 'stop';
  throw invalidField('on_error', 'enum', 'must be "stop" or "continue"');
}

export interface CompileRequest {
  latex: string;
  compiler: Compiler;
  /** main.tex and the project files together. */
  bytes: number;
  /** The project's other text files (`files`), for the job's workspace. */
  files: ProjectFiles['files'];
  /** The binary files of `files`, for the asset resolver. */
  binary: ProjectFiles['binary'];
  /** Over the plan's source limit but within the hard cap: compile as a size preview. */
  sizePreview: boolean;
  /** `on_error`: "continue" delivers a PDF TeX wrote despite errors. */
  onError: OnError;
}

/**
 * Shape, size, LaTeX-ness and compiler of a compile request for `tier`. With `previews`,
 * a source over the plan limit (but within the hard cap) passes as a size preview.
 */
export function checkRequest(
  input: { latex?: unknown; compiler?: unknown; files?: unknown; project_zip?: unknown; on_error?: unknown },
  tier: Tier,
  upgradeUrl: string,
  previews = false,
): CompileRequest {
  if (input.project_zip !== undefined && input.project_zip !== null) {
    if (input.latex !== undefined || input.files !== undefined) {
      throw errors.invalid_project_zip('project_zip: send either project_zip or latex (with files), not both.', { reason: 'project_zip replaces latex and files' });
    }
    input = { ...input, ...expandProjectZip(input.project_zip) };
  }
  const { latex, compiler = 'pdflatex' } = input;
  if (latex === undefined || latex === null) throw invalidField('latex', 'required', 'is required');
  if (typeof latex !== 'string') throw invalidField('latex', 'type', 'must be a string');
  if (!isCompiler(compiler)) throw invalidField('compiler', 'enum', 'must be one of pdflatex, xelatex, lualatex');
  const onError = parseOnError(input.on_error);

  const project = checkProjectFiles(input.files);
  const bytes = Buffer.byteLength(latex, 'utf8') + project.bytes;
  const what = project.files.length > 0 ? 'The source (latex and files together)' : 'The source';
  const limits = limitsOf(tier);
  const sizePreview = previews && bytes > limits.maxLatexBytes && bytes <= SIZE_PREVIEW_MAX_BYTES;
  if (bytes > limits.maxLatexBytes && !sizePreview) {
    const limit = limits.maxLatexBytes;
    const window = previews && limits.maxLatexBytes < SIZE_PREVIEW_MAX_BYTES ? ` Size previews take sources up to ${SIZE_PREVIEW_MAX_BYTES} bytes.` : '';
    throw errors.latex_too_large(`${what} is ${bytes} bytes; the limit here is ${limit} bytes.${window}`, {
      limit,
      size_bytes: bytes,
      plan: tier,
      plan_required: smallestPlan((l) => l.maxLatexBytes >= bytes),
      upgrade_url: upgradeUrl,
      retryable: false,
    });
  }
  if (!LATEX_MARKERS.some((marker) => latex.includes(marker))) {
    throw errors.not_latex_source('This is not LaTeX source: the service compiles complete LaTeX documents only.', {
      requirements: [
        'The source must contain at least one of \\documentclass, \\begin{document}, \\input{} or \\include{}.',
        'Send a complete document: \\documentclass{...}, then \\begin{document} ... \\end{document}.',
        'Plain text, Markdown or JSON must be converted to LaTeX first.',
      ],
      example_template: EXAMPLE_TEMPLATE,
      retryable: false,
    });
  }
  if (!limits.compilers.includes(compiler)) {
    const plan = smallestPlan((l) => l.compilers.includes(compiler));
    throw errors.compiler_not_available(
      tier === 'anonymous'
        ? `${compiler} needs an API key; the keyless tier compiles with pdflatex only.`
        : `${compiler} is not included in the ${tier} plan; it needs ${plan} or above.`,
      {
        compiler,
        plan: tier,
        allowed_compilers: [...limits.compilers],
        plan_required: plan,
        upgrade_url: upgradeUrl,
        retryable: false,
      },
    );
  }
  return { latex, compiler, bytes, files: project.files, binary: project.binary, sizePreview, onError };
}
