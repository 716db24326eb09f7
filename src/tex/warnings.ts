// Problems in a document that compiled: what an agent can still improve. Read from the last
// pass's transcript (undefined references and citations, font slots pdflatex left empty)
// plus what bibtex/biber reported without stopping delivery (errors in entries, a database
// that is not in the project). Where TeX only warns, so does the service.
import { Type, type Static } from '@sinclair/typebox';
import type { Compiler } from './compilers.js';
import { databaseLine } from './diagnosis/bibtools.js';
import { Source } from './diagnosis/source.js';

/**
 * Extension of SPEC 1.5.0: a problem in a document that compiled. Declared here, the layer
 * that finds them, as the wire schema compile bodies embed (CompileWarning).
 */
export const TexWarningBody = Type.Object(
  {
    type: Type.Union([
      Type.Literal('undefined_reference'),
      Type.Literal('undefined_citation'),
      Type.Literal('bibliography_error'),
      Type.Literal('missing_glyph'),
      Type.Literal('missing_file'),
      Type.Literal('tagging_blocked'),
    ]),
    message: Type.String(),
    /** Of the file being read at the time, main.tex or a project file. */
    line: Type.Optional(Type.Integer({ description: 'Input line TeX reported' })),
    fix: Type.String(),
    symbol: Type.Optional(Type.String({ description: 'What is missing: the file name, or the codepoint (U+2603) of a missing_glyph under xelatex/lualatex' })),
  },
  { description: 'CompileWarning' },
);

export type TexWarning = Static<typeof TexWarningBody>;
export type TexWarningType = TexWarning['type'];

/** Enough for an agent to act on; a document with hundreds of broken keys has one cause. */
const MAX_WARNINGS = 50;

/** A bib tool's error in an entry, or (`missing`) a database it could not find. */
export interface BibliographyProblem {
  tool: string;
  message: string;
  missing?: string;
}

/**
 * `log` is the last pass's main.log; `raw` the same as bytes when pdflatex reported missing
 * characters: it prints an empty slot as the raw byte, which a UTF-8 reading turns into U+FFFD.
 * `source` (main.tex) gives the line that names a missing database.
 */
export function collectWarnings(
  log: string,
  raw: Buffer | null,
  compiler: Compiler,
  bibliographyProblems: BibliographyProblem[],
  source?: string,
): TexWarning[] {
  const warnings: TexWarning[] = [];
  const seen = new Set<string>();
  const add = (warning: TexWarning) => {
    const key = `${warning.type}\0${warning.message}`;
    if (seen.has(key) || warnings.length >= MAX_WARNINGS) return;
    seen.add(key);
    warnings.push(warning);
  };

  for (const m of log.matchAll(/^(?:LaTeX|Package natbib|Package biblatex) Warning: (Reference|Citation) [`'"]([^'"]+)'(?: on page \S+)? undefined(?: on input line (\d+))?/gm)) {
    const citation = m[1] === 'Citation';
    const key = m[2]!;
    add({
      type: citation ? 'undefined_citation' : 'undefined_reference',
      message: citation ? `The citation "${key}" is not in the bibliography.` : `The reference "${key}" points to no \\label.`,
      ...(m[3] ? { line: Number(m[3]) } : {}),
      fix: citation
        ? `Add an entry with the key "${key}" to the .bib file (or fix the key in \\cite), and make sure the .bib file is sent in "files".`
        : `Add \\label{${key}} where the target is, or fix the name in \\ref{${key}}.`,
    });
  }

  const main = source === undefined ? undefined : new Source(source);
  for (const problem of bibliographyProblems) {
    if (problem.missing !== undefined) {
      const name = problem.missing;
      const line = main && databaseLine(main, name);
      add({
        type: 'missing_file',
        message: `${problem.tool} cannot find the bibliography database "${name}": the citations print as [?].`,
        ...(line !== undefined ? { line } : {}),
        fix: `Send "${name}" in "files" (file name → the .bib text), or fix the name in \\${problem.tool === 'biber' ? 'addbibresource' : 'bibliography'}.`,
        symbol: name,
      });
      continue;
    }
    add({
      type: 'bibliography_error',
      message: `${problem.tool}: ${problem.message}`,
      fix: 'Fix the .bib entry the message names (a missing comma or brace is the usual cause); the entry was left out of the bibliography.',
    });
  }

  if (compiler === 'pdflatex' && raw) {
    const latin1 = raw.toString('latin1');
    for (const m of latin1.matchAll(/^Missing character: There is no (.+?) in font (.+?)!$/gm)) {
      const font = m[2]!;
      if (font.startsWith('nullfont')) continue;
      const slot = slotOf(m[1]!);
      if (slot === undefined) continue;
      const hex = slot.toString(16).toUpperCase().padStart(2, '0');
      add({
        type: 'missing_glyph',
        message: `The font ${font} has no character in slot ${slot} (0x${hex}); pdflatex left it out of the PDF.`,
        fix: `Use a font encoding that has the character (\\usepackage[T1]{fontenc}) or write it with its LaTeX command instead of \\symbol/\\char.`,
      });
    }
  }
  return warnings;
}

/** The slot pdflatex printed: a raw byte, or ^^xx notation. */
function slotOf(printed: string): number | undefined {
  const caret = /^\^\^([0-9a-f]{2})$/.exec(printed);
  if (caret) return parseInt(caret[1]!, 16);
  const control = /^\^\^(.)$/.exec(printed);
  if (control) return control[1]!.charCodeAt(0) ^ 0x40;
  if (printed.length === 1) return printed.charCodeAt(0);
  return undefined;
}

/**
 * Extension of SPEC 1.5.0: an error TeX recovered from in a document delivered with
 * `on_error: "continue"` (the last pass's, as -file-line-error prints them).
 */
export const TexErrorBody = Type.Object(
  {
    message: Type.String(),
    /** The file TeX was reading: main.tex, a project file, or the base name of a TeX Live file. */
    file: Type.Optional(Type.String()),
    line: Type.Optional(Type.Integer({ description: 'Input line TeX reported' })),
  },
  { description: 'CompileError' },
);

export type TexError = Static<typeof TexErrorBody>;

/** `./chapters/a.tex:12: Undefined control sequence.` and `! Emergency stop.` (no file open). */
const ERROR_LINE = /^(?:(.+?\.[A-Za-z0-9]+):(\d+): |! )(.+)$/gm;

/** The errors of the last pass's transcript, in order, each once (at most MAX_WARNINGS). */
export function collectErrors(log: string): TexError[] {
  const errors: TexError[] = [];
  const seen = new Set<string>();
  for (const m of log.matchAll(ERROR_LINE)) {
    const [, path, line, message] = m;
    // A path in the TeX tree is named by its file; a project's keeps its folders.
    const file = path === undefined ? undefined : path.startsWith('/') ? path.slice(path.lastIndexOf('/') + 1) : path.replace(/^(?:\.\/)+/, '');
    const error: TexError = { message: message!.trim(), ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line: Number(line) } : {}) };
    const key = `${error.file}\0${error.line}\0${error.message}`;
    if (seen.has(key) || errors.length >= MAX_WARNINGS) continue;
    seen.add(key);
    errors.push(error);
  }
  return errors;
}
