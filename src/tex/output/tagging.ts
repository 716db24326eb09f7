// The source side of a tagged PDF (issue 40): the kernel's \DocumentMetadata, written before
// \documentclass, turns on tagging (the structure tree, marked content, /Lang) and writes the
// metadata of the standards claimed (pdfuaid, pdfaid, the output intent, the PDF version).
// pdfx is not loaded on this path: the kernel's pdfmanagement writes the XMP itself, and the
// document's title and the rest of `metadata` reach it through hyperref's keys, escaped by
// kernelText (no character of the caller's text is read as a command).
import type { Compiler } from '../compilers.js';
import type { OutputMetadata, OutputSpec } from './spec.js';

/** A \DocumentMetadata command not commented out (a document's own, which the service does not replace). */
const DOCUMENT_METADATA = /^[^%\n]*\\DocumentMetadata\b/m;

/** Whether the main source calls \DocumentMetadata itself. */
export function hasDocumentMetadata(source: string): boolean {
  return DOCUMENT_METADATA.test(source);
}

/** Engines whose tagged PDF is accessible: XeTeX cannot write the marked content the structure tree needs (see docs/pdf-output.md). */
export const TAGGING_ENGINES: ReadonlyArray<Compiler> = ['lualatex', 'pdflatex'];

/** The kernel's spelling of a standard in `pdfstandard` (its keys are case-insensitive; this is the documented case). */
function kernelStandard(standard: string): string {
  return standard.startsWith('a-') ? `A-${standard.slice(2).toUpperCase()}` : `UA-${standard.slice(3)}`;
}

/** The \DocumentMetadata line the job's source starts with when `output` tags the PDF; null otherwise. */
export function documentMetadataLine(output: OutputSpec): string | null {
  const tagging = output.tagging;
  if (!tagging) return null;
  const standards = [output.pdfStandard, tagging.ua].filter((s) => s !== undefined).map(kernelStandard);
  const keys = [
    ...(tagging.lang ? [`lang=${tagging.lang}`] : []),
    ...(tagging.pdfVersion ? [`pdfversion=${tagging.pdfVersion}`] : []),
    ...(standards.length > 0 ? [`pdfstandard={${standards.join(',')}}`] : []),
    'tagging=on',
  ];
  return `\\DocumentMetadata{${keys.join(',')}}`;
}

/**
 * Text made for PDF strings (an image's alt={…}, /ActualText, bookmarks) goes through the
 * kernel's \\pdf_purify:nN, which keeps a text command it has no equivalent for by its name:
 * a template value's escapes (templates/escape.ts: \\textasciitilde{}, \\textquotesingle{}, …,
 * and \\kern0pt{} between two hyphens or commas) would reach /Alt as "\\textquotesingle".
 * Declared here, each becomes its character again (a \\kern's 0pt is dropped, any other kept).
 */
const PURIFY_ESCAPES =
  '\\ExplSyntaxOn' +
  [
    ['textasciitilde', '\\c_tilde_str'],
    ['textbackslash', '\\c_backslash_str'],
    ['textasciicircum', '\\c_circumflex_str'],
    ['textless', '<'],
    ['textgreater', '>'],
    ['textbar', '|'],
    ['textquotedbl', '"'],
    ['textquotesingle', "'"],
    ['textasciigrave', '`'],
  ]
    .map(([command, text]) => `\\text_declare_purify_equivalent:Nn\\${command}{${text}}`)
    .join('') +
  '\\cs_new:Npn\\__quire_purify_kern:w#1#2#3{\\str_if_eq:nnF{#1#2#3}{0pt}{#1#2#3}}' +
  '\\text_declare_purify_equivalent:Nn\\kern{\\__quire_purify_kern:w}' +
  '\\ExplSyntaxOff';

/**
 * What follows \documentclass on the tagging path: hyperref at the end of the preamble (the
 * kernel's UA support reads the title from it and shows it: /DisplayDocTitle) with the
 * caller's metadata. Title, author, subject and keywords are escaped by xmpText (the BCP 47
 * tag is checked by the schema: letters, digits and hyphens only).
 */
export function taggingPreamble(output: OutputSpec): string[] {
  if (!output.tagging) return [];
  const keys = ['pdfdisplaydoctitle=true', ...hyperrefKeys(output.metadata ?? {})];
  return [
    `\\makeatletter\\let\\QuireBackslash\\@backslashchar\\makeatother`,
    PURIFY_ESCAPES,
    `\\AddToHook{begindocument/before}{\\RequirePackage{hyperref}\\hypersetup{${keys.join(',')}}}`,
  ];
}

/**
 * A TeX-safe spelling of `text` as a hyperref metadata value on the kernel's path, where the
 * value reaches the Info dictionary and the XMP as text (pdfx's \\textbackslash would be written
 * literally): a backslash is \\QuireBackslash (LaTeX's catcode-12 backslash), braces and % are
 * escaped, the other specials \\string'ed. Checked on lualatex and pdflatex (docs/pdf-output.md).
 */
export function kernelText(text: string): string {
  return text.replace(/[\\{}%#&$^_~]/g, (c) => {
    if (c === '\\') return '\\QuireBackslash ';
    if (c === '{' || c === '}' || c === '%') return `\\${c}`;
    return `\\string${c}`;
  });
}

function hyperrefKeys(metadata: OutputMetadata): string[] {
  const keys: string[] = [];
  if (metadata.title) keys.push(`pdftitle={${kernelText(metadata.title)}}`);
  if (metadata.author) keys.push(`pdfauthor={${kernelText(metadata.author)}}`);
  if (metadata.subject) keys.push(`pdfsubject={${kernelText(metadata.subject)}}`);
  if (metadata.keywords?.length) keys.push(`pdfkeywords={${metadata.keywords.map(kernelText).join(', ')}}`);
  if (metadata.creator) keys.push(`pdfcreator={${kernelText(metadata.creator)}}`);
  return keys;
}
