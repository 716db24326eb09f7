// Normalised views of the arguments the template policy judges: file names, link targets and
// raw PDF text. Each view undoes what TeX or a PDF reader would undo (braces, comments, quotes,
// escapes, case, PDF #xx and \ddd spellings) before a rule looks at it, and anything that could
// still change the meaning at run time (a macro, a macro parameter) is refused, not guessed.

/** A TeX comment runs to the end of its line and swallows the next line's leading blanks. */
export function stripComments(text: string): string {
  return text.replace(/(?<!\\)((?:\\\\)*)%[^\n]*(?:\n[ \t]*|$)/g, '$1');
}

const UNSAFE_PIECE = /^[/\\~$]|^[A-Za-z]:|(^|[/\\])\.\.([/\\]|$)|[~$]|\^\^/;

export type PathProblem = { rule: 'unsafe_path' | 'pipe_input' | 'indirect_command'; what: string };

/**
 * Why a file argument is unsafe, or null. The argument is judged as every name TeX could read
 * from it: braces and quotes removed (`{/etc}/passwd`, `{}/etc/passwd`), each brace group,
 * comma-separated entry and blank-separated word on its own (`{./a/}{/etc/}` in \graphicspath),
 * comments dropped. A macro or a macro parameter could become any name, so it is refused.
 */
export function pathProblem(arg: string, options: { allowRowBreaks?: boolean } = {}): PathProblem | null {
  const text = stripComments(arg);
  const withoutBreaks = options.allowRowBreaks ? text.replace(/\\\\/g, ' ') : text;
  const macro = /\\(?!jobname\b)([A-Za-z@]+|.)/s.exec(withoutBreaks);
  if (macro) return { rule: 'unsafe_path', what: `a macro (\\${macro[1]}) in a file name` };
  if (/(?<!\\)#/.test(text)) return { rule: 'unsafe_path', what: 'a macro parameter in a file name' };
  const joined = text.replace(/[{}"\s]/g, '');
  const pieces = [joined, ...text.split(/[{},"\s]+/)].filter((piece) => piece !== '');
  for (const piece of pieces) {
    if (piece.startsWith('|')) return { rule: 'pipe_input', what: `the pipe "${piece.slice(0, 40)}"` };
    if (UNSAFE_PIECE.test(piece)) return { rule: 'unsafe_path', what: `the path "${piece.slice(0, 60)}"` };
  }
  return null;
}

/** What the escaper's glyph commands print, so escaped user text reads as what it says. */
const GLYPHS: Record<string, string> = {
  textbackslash: '\\',
  textasciicircum: '^',
  textasciitilde: '~',
  textless: '<',
  textgreater: '>',
  textbar: '|',
  textquotedbl: '"',
  textquotesingle: "'",
  textasciigrave: '`',
};

const BAD_SCHEMES = new Set(['javascript', 'vbscript', 'file', 'run', 'launch', 'data', 'livescript', 'mocha']);

/**
 * Why a link target is unsafe, or null. The target is read as a PDF viewer would see it:
 * escapes undone, braces, blanks and control characters dropped, case folded. Its scheme is
 * fixed only by literal text: a macro or parameter before the first ":" (\detokenize, \string,
 * a \def'd word, #1) could supply `javascript`, so it is refused. `\href` without a scheme is a
 * link to a local file (hyperref makes it a GoToR action), so `\href` needs a scheme or `#`.
 */
export function linkProblem(arg: string, command: string, options: { liquidPending: boolean }): string | null {
  let text = stripComments(arg)
    .replace(/\\kern0pt\{\}|\\leavevmode\\newline\{\}/g, '')
    .replace(/\\([A-Za-z]+)\{\}/g, (whole, name: string) => (Object.hasOwn(GLYPHS, name) ? GLYPHS[name]! : whole))
    .replace(/\\([^A-Za-z@])/g, '$1');
  const colon = text.indexOf(':');
  const head = colon === -1 ? text : text.slice(0, colon);
  const indirect = /\\[A-Za-z@]+|(?<!\\)#\d/.exec(head);
  if (indirect) return `a link whose scheme is built by ${indirect[0]}`;
  text = text.replace(/[{}\s\u0000-\u001f\u007f]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(text);
  if (scheme) return BAD_SCHEMES.has(scheme[1]!) ? `a ${scheme[1]}: link` : null;
  if (command === 'href' && text !== '' && !text.startsWith('#') && !options.liquidPending) {
    return `a link to the local file "${text.slice(0, 40)}"`;
  }
  return null;
}

const PDF_ACTION_NAMES =
  /\/(launch|javascript|js|submitform|importdata|gotor|gotoe|resetform|rendition|sound|movie|richmediaexecute|named)(?![a-z0-9])/;
// A URI is a PDF string: its scheme follows the opening parenthesis (hex strings are decoded
// into one below).
const PDF_URI_SCHEME = /\((javascript|vbscript|file|run|launch|data|livescript|mocha):/;

/** PDF name #xx escapes and literal/hex string escapes decoded, blanks dropped, case folded. */
export function pdfView(text: string): string {
  const decoded = stripComments(text)
    // TeX spellings of a backslash in a PDF string: \string\152, \detokenize{\152}, \@backslashchar.
    .replace(/\\(string|detokenize|unexpanded|@backslashchar|textbackslash)\b\s*/g, '\\')
    .replace(/\\\\/g, '\\')
    .replace(/\\#/g, '#')
    .replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\([0-7]{1,3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8) & 0xff))
    .replace(/\\\r?\n/g, '')
    .replace(/\\([nrtbf()\\])/g, (_, ch: string) => (({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }) as Record<string, string>)[ch] ?? ch)
    // A backslash before any other character is ignored by a PDF reader: (java\script:…).
    .replace(/\\(.)/gs, '$1')
    .replace(/<([0-9A-Fa-f\s]+)>/g, (_, hex: string) => {
      const digits = hex.replace(/\s/g, '');
      const padded = digits.length % 2 ? `${digits}0` : digits;
      return `(${Buffer.from(padded, 'hex').toString('latin1')})`;
    });
  return decoded.replace(/[\s\u0000-\u001f\u007f{}]/g, '').toLowerCase();
}

/** Commands allowed inside raw PDF text: they print numbers or object references, never names. */
const PDF_SAFE_MACROS = /^(the|number|numexpr|dimexpr|pdflastobj|pdflastannot|pdflastlink|pdfpageref|lastsavedboxresourceindex|lastsavedimageresourceindex|space|relax|string|detokenize|unexpanded|@backslashchar|thepage|c@page|pdfpagewidth|pdfpageheight|paperwidth|paperheight)$/i;

/**
 * Why raw PDF text (the argument of \pdfannot, \special, \pdfobj, hyperref options…) is unsafe,
 * or null: an action that runs or opens something, or (with `uris`) a URI with such a scheme,
 * in any PDF spelling. With `literal`, a macro other than the number-printing ones is refused too, since
 * it could expand to an action name the check never saw.
 */
export function pdfProblem(text: string, options: { literal: boolean; uris: boolean }): string | null {
  if (options.literal) {
    for (const match of text.matchAll(/\\([A-Za-z@]+)/g)) {
      if (!PDF_SAFE_MACROS.test(match[1]!)) return `the macro \\${match[1]} inside raw PDF`;
    }
  }
  const view = pdfView(text);
  const action = PDF_ACTION_NAMES.exec(view);
  if (action) return `the PDF action ${action[0]}`;
  const uri = options.uris ? PDF_URI_SCHEME.exec(view) : null;
  if (uri) return `a ${uri[1]}: URI`;
  return null;
}
