// The quire://guide resource: what an agent needs to write documents that compile here.
// Numbers come from the plan table so the guide never disagrees with the checks.
import { ASSET_NAME_RULE } from '../asset-name.js';
import { ASSET_EXTENSIONS, PLANS } from '../quota/plans.js';

const anon = PLANS.anonymous;

export const GUIDE = `# Writing LaTeX for Quire

Quire compiles complete LaTeX documents into PDF and returns a signed \`pdf_url\` that works
without credentials until \`expires_at\`. Give that link to the user.

## The source
- Send a whole document: \`\\documentclass{...}\`, a preamble, \`\\begin{document}\` ... \`\\end{document}\`.
  Plain text, markdown or JSON is refused with \`not_latex_source\`.
- Compilers: \`pdflatex\` (default), \`xelatex\` (any API key), \`lualatex\` (Pro and Business).
  Use xelatex or lualatex for \`fontspec\`, system fonts and wide Unicode; pdflatex otherwise.
- No shell escape: \`minted\`, \`\\write18\` and external tools do not work. Use \`listings\` for code.
- Bibliographies: put the .bib inline with \`filecontents\`; bibtex or biber runs when needed.
- Images: send them as \`assets\` (file name → base64; ${ASSET_EXTENSIONS.join(', ')}; names of
  ${ASSET_NAME_RULE}) or name stored assets in
  \`use_stored_assets\` (paid plans), then \`\\includegraphics{name.png}\`.

## Without an API key
${anon.compilesPerPeriod} successful compiles per day per IP, pdflatex only, ${anon.maxPages} pages,
${anon.maxLatexBytes / 1024} KB of source, no assets, links valid for ${anon.pdfLinkSeconds / 3600} hour(s).
Failed compiles cost nothing. Read \`quire://limits\` for every plan's limits.

## Before compiling
\`validate\` takes the same arguments as \`compile\` and costs nothing: it reports plan problems,
packages and classes not installed here (with the closest installed names), files the document
reads but the request does not carry, and chktex warnings, each with its \`line\`. Fix every
finding of severity \`error\`, then compile. With \`template\` and \`data\` it checks render data.

## When a compile fails
The tool result has \`isError: true\` and the error body in \`structuredContent\`:
- \`compilation_failed\`: \`line\`, \`log\`, \`agent_hint\`, and when the cause is known a \`diagnosis\`
  with \`error_class\`, \`summary\`, \`suggested_fix\` and often \`suggested_package\`. Apply the fix to
  the source (add the package to the preamble, close the environment, escape the character...) and
  call \`compile\` again with the whole corrected document.
- Limits (\`latex_too_large\`, \`page_limit_exceeded\`, \`compiler_not_available\`...) name the limit and
  the plan; shorten the document, change the compiler, or tell the user which plan is needed.
- Quota (\`anonymous_quota_exhausted\`, \`rate_limit\`): tell the user; \`next_step\` says how to get a key.

## Warnings
A successful result may carry \`warning\` (grace quota used, or a truncated preview with
\`preview: true\`, \`total_pages\` and \`plan_required\`). Relay it to the user.

## Public templates
\`list_public_templates\` → \`get_public_template\` (schema, sample_data, instructions) →
\`render_public_template\` with \`data\` matching the schema and an optional \`color\`. Values are
escaped for LaTeX by the template, so send plain text (\`&\`, \`%\`, \`$\` are fine).
`;
