// xelatex and lualatex do not stop on a character the font lacks: they log "Missing character"
// and leave it out of the PDF. This finds those characters and names installed fonts that
// have them.
import type { Compiler } from '../../quota/plans.js';
import type { Finding } from './rules.js';
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
    const char = m[2] ? String.fromCodePoint(parseInt(m[2], 16)) : m[1];
    if ([...char].length !== 1 || (char.codePointAt(0) ?? 0) < 0x20) continue;
    if (!chars.has(char)) chars.set(char, m[3].replace(/^\[|\].*$/g, '').replace(/:.*$/, ''));
  }
  if (chars.size === 0) return undefined;
  const list = [...chars.keys()];
  const first = list[0] ?? '';
  const named = list.slice(0, 8).map((c) => `${c} (${codepointOf(c)})`).join(', ') + (list.length > 8 ? ` and ${list.length - 8} more` : '');
  const font = chars.get(first) ?? 'the current font';
  const line = source ? findChar(source, list) : undefined;
  const where = line === undefined ? '' : ` (first on line ${line})`;
  // A font that has every missing character, else one for the first.
  const perChar = list.map((c) => fontsWithChar(c.codePointAt(0) ?? 0));
  const common = (perChar[0] ?? []).filter((f) => perChar.every((fonts) => fonts.includes(f)));
  const fallback = common[0] ?? perChar[0]?.[0];
  const missingEverywhere = list.filter((_, i) => (perChar[i] ?? []).length === 0);
  const summary = `The font ${font} has no glyph for ${named}${where}; ${engine} left ${list.length === 1 ? 'it' : 'them'} out of the PDF.`;
  let fix: string;
  let hint: string;
  if (fallback && missingEverywhere.length === 0) {
    const cover = common[0] ? '' : ` (it covers ${first}; check the other characters)`;
    fix = `Add \\usepackage{fontspec} and \\newfontfamily\\fallbackfont{${fallback}} to the preamble and write the characters as {\\fallbackfont ${first}}${where}, or use the font for the whole document with \\setmainfont{${fallback}}${cover}.`;
    hint = `Add \\usepackage{fontspec} and \\setmainfont{${fallback}} to the preamble (or wrap the characters in that font) and compile again.`;
  } else {
    const gone = missingEverywhere.map((c) => `${c} (${codepointOf(c)})`).join(', ');
    fix = `Remove or replace ${gone}${where}: no font installed on this server has ${missingEverywhere.length === 1 ? 'this character' : 'these characters'}.`;
    hint = `Remove ${gone}${where} from the source and compile again.`;
  }
  return {
    error_class: 'unsupported_unicode',
    summary,
    suggested_fix: fix,
    symbol: codepointOf(first),
    line,
    retryable: missingEverywhere.length === 0,
    hint,
  };
}

function findChar(source: Source, chars: string[]): number | undefined {
  let best: number | undefined;
  for (const c of chars) {
    const line = source.find(new RegExp(c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'u'));
    if (line !== undefined && (best === undefined || line < best)) best = line;
  }
  return best;
}
