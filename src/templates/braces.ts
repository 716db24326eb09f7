// LaTeX is full of braces and comment signs, so `{{` and `{%` occur in ordinary LaTeX
// (`\textbf{{{ name }}}`, `\def\x#1{%`). Before Liquid sees a source, every brace run that is
// LaTeX rather than Liquid is rewritten into a Liquid output of a literal string, so Liquid
// prints it back unchanged. Only braces move; line breaks stay, so error lines stay true.
//
// The rules (documented for template authors in docs/api.md, "Writing templates"):
// - `{{` opens a placeholder when what follows (after an optional `-` and blanks) can start a
//   Liquid expression: a letter, `_`, a quote, a digit, `(` or `[`. In a longer run of braces
//   the LAST two are the placeholder: `\textbf{{{ name }}}` is `\textbf{` + `{{ name }}` + `}`.
// - `{%` opens a tag when followed (after an optional `-` and spaces or tabs on the same line)
//   by a Liquid tag name; otherwise `{%` is a brace and a LaTeX comment, as in `\def\x#1{%`.
// - Everything else made of braces is LaTeX.

const TAG_NAMES = new Set([
  'assign', 'break', 'capture', 'endcapture', 'case', 'when', 'endcase', 'comment', 'endcomment',
  'continue', 'cycle', 'decrement', 'echo', 'else', 'elsif', 'for', 'endfor', 'if', 'endif',
  'increment', 'liquid', 'raw', 'endraw', 'tablerow', 'endtablerow', 'unless', 'endunless',
  // Refused by the security policy, but recognised so the refusal names them.
  'include', 'render', 'layout', 'block', 'endblock',
]);

const EXPRESSION_START = /[A-Za-z_"'0-9([]/;
// Sticky, so looking past a brace run never copies the rest of the source.
const BLANKS = /-?\s*/y;

function literal(braces: string): string {
  return `{{ "${braces}" | raw }}`;
}

/** Position just past the closing delimiter, honouring quoted strings; -1 when unclosed. */
function closeOf(source: string, from: number, delimiter: '}}' | '%}'): number {
  let i = from;
  while (i < source.length) {
    const ch = source[i];
    if (ch === '"' || ch === "'") {
      const end = source.indexOf(ch, i + 1);
      if (end === -1) return -1;
      i = end + 1;
      continue;
    }
    if (source.startsWith(delimiter, i)) return i + 2;
    i++;
  }
  return -1;
}

function tagNameAt(source: string, from: number): string | null {
  const match = /^-?[ \t]*([A-Za-z_]\w*|#)/.exec(source.slice(from, from + 64));
  if (!match) return null;
  const name = match[1]!;
  return name === '#' || TAG_NAMES.has(name) ? name : null;
}

/** True when `source` holds a Liquid placeholder or tag (by the rules above). */
export function hasLiquidMarkup(source: string): boolean {
  return scan(source).liquid;
}

export function protectLatexBraces(source: string): string {
  return scan(source).out;
}

function scan(source: string): { out: string; liquid: boolean } {
  let liquid = false;
  let out = '';
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf('{', i);
    if (open === -1) {
      out += source.slice(i);
      break;
    }
    out += source.slice(i, open);
    let end = open;
    while (source[end] === '{') end++;
    const run = end - open;
    BLANKS.lastIndex = end;
    const afterLength = BLANKS.exec(source)![0].length;
    if (run >= 2 && EXPRESSION_START.test(source[end + afterLength] ?? '')) {
      // Placeholder: the last two braces open it, the others are LaTeX.
      liquid = true;
      if (run > 2) out += literal('{'.repeat(run - 2));
      const close = closeOf(source, end, '}}');
      const stop = close === -1 ? source.length : close;
      out += source.slice(end - 2, stop);
      i = stop;
      continue;
    }
    const tag = source[end] === '%' ? tagNameAt(source, end + 1) : null;
    if (tag !== null) {
      liquid = true;
      if (run > 1) out += literal('{'.repeat(run - 1));
      const close = closeOf(source, end + 1, '%}');
      let stop = close === -1 ? source.length : close;
      if (tag === 'raw' && close !== -1) {
        const endraw = /\{%-?\s*endraw\s*-?%\}/g; // one forward search per raw block
        endraw.lastIndex = close;
        const found = endraw.exec(source);
        stop = found ? found.index + found[0].length : source.length;
      }
      out += source.slice(end - 1, stop);
      i = stop;
      continue;
    }
    // LaTeX braces. A single brace before anything but `%` or `{` is harmless as it is.
    out += run >= 2 || source[end] === '%' ? literal('{'.repeat(run)) : '{';
    i = end;
  }
  return { out, liquid };
}
