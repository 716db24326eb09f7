// xelatex and lualatex do not stop on a character the font lacks: they log "Missing character"
// and leave it out of the PDF. This finds those characters and names installed fonts that
// have them.
import type { Compiler } from '../compilers.js';
import type { Finding } from './rules/finding.js';
import type { Source } from './source.js';
import { codepointOf, fontsWithChar } from './unicode.js';

// "Missing character: There is no 😀 (U+1F600) in font [lmroman10-regular]:mapping=tex-text;!"
// (older engines omit the codepoint). nullfont losses are TeX-internal noise, never text.
const MISSING = /^Missing character: There is no (.+?)(?: \(U\+([0-9A-F]{4,6})\))? in font (.+?)!$/;

export function missingGlyphs(log: string, engine: Compiler, source?: Source): (Finding & { line?: number }) | undefined {
  const chars = new Map<string, string>();
  for (const line of log.replace(/\r\n?/g, '\n').split('\n')) {
    const m = MISSING.exec(line);
    if (!m?.[1] || !m[3] || m[3].startsWith('nullfont')) continue;
    const char = m[2] ? String.fromCodePoint(parseInt(m[2], 16)) : printedChar(m[1]);
    // U+FFFD is a byte the log reader could not decode (an 8-bit font slot), never a character we can name.
    if (char === undefined || [...char].length !== 1 || (char.codePointAt(0) ?? 0) < 0x20 || char === '\uFFFD') continue;
    if (!chars.has(char)) chars.set(char, m[3].replace(/^\[|\].*$/g, '').replace(/:.*$/, ''));
  }
  if (chars.size === 0) return undefined;
  const list = [...chars.keys()];
  const first = list[0] ?? '';
  const named = list.slice(0, 8).map((c) => `${c} (${codepointOf(c)})`).join(', ') + (list.length > 8 ? ` and ${list.length - 8} more` : '');
  const font = chars.get(first) ?? 'the current font';
  const line = source ? findChar(source, list) : undefined;
  const where = line === undefined ? '' : ` (first on line ${line})`;
  // Group the characters by an installed font that has them, preferring one font for all.
  const perChar = list.map((c) => fontsWithChar(c.codePointAt(0) ?? 0));
  const coverable = list.filter((_, i) => (perChar[i] ?? []).length > 0);
  const gone = list.filter((_, i) => (perChar[i] ?? []).length === 0);
  const shared = perChar.filter((f) => f.length > 0);
  const common = (shared[0] ?? []).find((f) => shared.every((fonts) => fonts.includes(f)));
  const byFont = new Map<string, string[]>();
  list.forEach((c, i) => {
    const font = common ?? perChar[i]?.[0];
    if (font) byFont.set(font, [...(byFont.get(font) ?? []), c]);
  });
  const summary = `The font ${font} has no glyph for ${named}${where}; ${engine} left ${list.length === 1 ? 'it' : 'them'} out of the PDF.`;
  const parts: string[] = [];
  let hint: string;
  if (byFont.size > 0) {
    const families = [...byFont.entries()];
    const declare = families.map(([f], i) => `\\newfontfamily\\fallback${'abcdefgh'[i] ?? ''}font{${f}}`).join(' ');
    const use = families.map(([, cs], i) => `{\\fallback${'abcdefgh'[i] ?? ''}font ${cs.join('')}}`).join(', ');
    const main = families.length === 1 ? `, or use the font for the whole document with \\setmainfont{${families[0]?.[0]}}` : '';
    parts.push(`add \\usepackage{fontspec} and ${declare} to the preamble and write the characters as ${use}${where}${main}`);
    hint = `Add \\usepackage{fontspec} and \\setmainfont{${families[0]?.[0]}} to the preamble${gone.length ? `, remove ${gone.join(' ')}` : ''} and compile again.`;
  } else {
    hint = `Remove ${gone.join(' ')}${where} from the source and compile again.`;
  }
  if (gone.length) {
    parts.push(`remove ${gone.map((c) => `${c} (${codepointOf(c)})`).join(', ')}: no font installed on this server has ${gone.length === 1 ? 'this character' : 'these characters'}`);
  }
  const fix = parts.join('; ').replace(/^./, (ch) => ch.toUpperCase()) + '.';
  return {
    error_class: 'unsupported_unicode',
    summary,
    suggested_fix: fix,
    symbol: codepointOf(first),
    line,
    retryable: coverable.length > 0,
    hint,
  };
}

/** The character as the engine printed it: itself, or TeX's ^^xx / ^^^^xxxx / ^^^^^^xxxxxx notation. */
function printedChar(printed: string): string | undefined {
  const caret = /^\^\^(?:\^\^(?:\^\^([0-9a-f]{6})|([0-9a-f]{4}))|([0-9a-f]{2}))$/.exec(printed);
  if (!caret) return printed;
  const cp = parseInt(caret[1] ?? caret[2] ?? caret[3]!, 16);
  return cp <= 0x10ffff ? String.fromCodePoint(cp) : undefined;
}

function findChar(source: Source, chars: string[]): number | undefined {
  let best: number | undefined;
  for (const c of chars) {
    const line = source.find(new RegExp(c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'u'));
    if (line !== undefined && (best === undefined || line < best)) best = line;
  }
  return best;
}
