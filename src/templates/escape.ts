// LaTeX escaping of user values: one pass over the string, each character mapped on its own,
// so an escape can never be re-escaped or combined with its neighbour into a command.

const MAP: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '{': '\\{',
  '}': '\\}',
  $: '\\$',
  '&': '\\&',
  '#': '\\#',
  '^': '\\textasciicircum{}',
  _: '\\_',
  '~': '\\textasciitilde{}',
  '%': '\\%',
  '<': '\\textless{}',
  '>': '\\textgreater{}',
  '|': '\\textbar{}',
  '"': '\\textquotedbl{}',
  "'": '\\textquotesingle{}',
  '`': '\\textasciigrave{}',
  '\t': ' ',
};

// A value's newline becomes a line break; \leavevmode keeps it legal at the start of a paragraph
// and \newline (unlike \\) never reads a following [ or * as its argument.
const NEWLINE = '\\leavevmode\\newline{}';
// Characters that TeX fonts turn into ligatures when doubled (--, ,,): a zero kern between the
// two keeps the text literal in every engine.
const LIGATURE_BREAK = '\\kern0pt{}';

// One regular expression over the input, a slice at a time: what is not special is copied by the
// engine without being looked at, and the per-match bookkeeping of a slice is garbage before the
// next one starts, so memory stays near input plus output (the old per-character array took ~40
// bytes of heap per input character). Control characters and lone surrogates would stop TeX with
// "invalid character" and are dropped.
const SPECIAL =
  /\r\n?|\n|[\\{}$&#^_~%<>|"'`\t]|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|-(?=-)|,(?=,)/g;
const SLICE = 64 * 1024;

function replacement(ch: string): string {
  if (ch === '\n' || ch[0] === '\r') return NEWLINE;
  const mapped = MAP[ch];
  if (mapped !== undefined) return mapped;
  if (ch === '-' || ch === ',') return ch + LIGATURE_BREAK;
  return '';
}

/** Where a slice may end: never inside \r\n, a surrogate pair, or a -- or ,, pair. */
function sliceEnd(input: string, from: number): number {
  let end = Math.min(input.length, from + SLICE);
  while (end < input.length && /[-,\r\uD800-\uDBFF]/.test(input[end - 1]!)) end++;
  return end;
}

export function escapeLatex(input: string): string {
  if (input.length <= SLICE) return input.replace(SPECIAL, replacement);
  let out = '';
  for (let start = 0; start < input.length; ) {
    const end = sliceEnd(input, start);
    out += input.slice(start, end).replace(SPECIAL, replacement);
    start = end;
  }
  return out;
}

/** How a value is printed before escaping: Liquid's own stringification for lists and nil. */
export function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(stringify).join('');
  if (typeof value === 'object') {
    const toLiquid = (value as { toString?: () => string }).toString;
    return typeof toLiquid === 'function' && toLiquid !== Object.prototype.toString ? String(value) : JSON.stringify(value);
  }
  return String(value);
}
