// Characters pdflatex cannot typeset: a Unicode character without a definition, bytes outside
// the declared 8-bit input encoding, a command the default OT1 font encoding lacks.
import { codepointOf, pdflatexAdvice, fontsWithChar } from '../unicode.js';
import { onLine, escape, PREAMBLE, type Rule } from './finding.js';

export const unicodeCharacter: Rule = ({ block, line }) => {
  const m = /Unicode character (\S+) \(U\+([0-9A-F]+)\)/.exec(block.message);
  if (!m?.[2]) return undefined;
  const char = String.fromCodePoint(parseInt(m[2], 16));
  const cp = codepointOf(char);
  const advice = pdflatexAdvice(char);
  const fonts = fontsWithChar(char.codePointAt(0) ?? 0);
  const where = onLine(line);
  const unicodeEngines = fonts.length
    ? `compile with xelatex or lualatex and \\usepackage{fontspec} plus \\setmainfont{${fonts[0]}} (an installed font that has it)`
    : undefined;
  let fix: string;
  let hint: string;
  if (advice?.usepackage && !advice.replacement) {
    fix = `Add ${advice.usepackage} ${PREAMBLE}; it makes ${char} (${cp}) usable with pdflatex.`;
    hint = `Add ${advice.usepackage} to the preamble and compile again.`;
  } else if (advice?.replacement) {
    const pkg = advice.usepackage ? ` and add ${advice.usepackage} to the preamble` : '';
    fix = `Replace ${char} (${cp})${where} with ${advice.replacement}${pkg}, or declare it once in the preamble with \\DeclareUnicodeCharacter{${m[2]}}{${advice.replacement}}.`;
    hint = `Replace ${char}${where} with ${advice.replacement}${pkg} and compile again.`;
  } else if (unicodeEngines) {
    fix = `pdflatex has no glyph for ${char} (${cp}): ${unicodeEngines}, or remove the character${where}.`;
    hint = `Set "compiler" to "xelatex", add \\usepackage{fontspec} and \\setmainfont{${fonts[0]}} to the preamble, and compile again.`;
  } else {
    fix = `Remove ${char} (${cp})${where}: no font installed on this server has this character, so no compiler here can print it.`;
    hint = `Remove the character ${char} (${cp})${where} and compile again.`;
  }
  return {
    error_class: 'unsupported_unicode',
    summary: `pdflatex cannot typeset the character ${char} (${cp})${where}.`,
    suggested_fix: fix,
    ...(advice?.package ? { suggested_package: advice.package } : {}),
    symbol: cp,
    line,
    retryable: Boolean(advice || unicodeEngines),
    hint,
  };
};

/**
 * Text outside the declared 8-bit input encoding: a UTF-8 file read as latin1 (or another
 * inputenc encoding). The log shows raw bytes; the character meant is found on the source
 * line: the first whose UTF-8 bytes include one the 8-bit encodings leave undefined (0x80-0x9F).
 */
export const inputEncoding: Rule = ({ block, source, line }) => {
  const m = /Keyboard character used is undefined (?:\(inputenc\) +)?in inputencoding [`']([^']+)'/.exec(block.message);
  if (!m?.[1]) return undefined;
  const encoding = m[1];
  const text = line !== undefined ? (source?.line(line) ?? '') : '';
  const chars = [...text].filter((c) => (c.codePointAt(0) ?? 0) > 0x7f);
  const char = chars.find((c) => [...Buffer.from(c, 'utf8')].some((b) => b >= 0x80 && b <= 0x9f)) ?? chars[0];
  const cp = char ? codepointOf(char) : undefined;
  const what = char ? `the character ${char} (${cp})` : 'a character';
  const at = source?.find(new RegExp(`\\\\usepackage\\s*\\[[^\\]]*${escape(encoding)}[^\\]]*\\]\\s*\\{inputenc\\}`));
  const fix = at !== undefined
    ? `Change \\usepackage[${encoding}]{inputenc} on line ${at} to \\usepackage[utf8]{inputenc} (or remove it: LaTeX reads UTF-8 by default): the file is UTF-8 and ${what}${onLine(line)} does not exist in ${encoding}.`
    : `Declare the input encoding as UTF-8 (\\usepackage[utf8]{inputenc}, LaTeX's default) instead of ${encoding}: ${what}${onLine(line)} does not exist in ${encoding}.`;
  return {
    error_class: 'unsupported_unicode',
    summary: `${what.charAt(0).toUpperCase() + what.slice(1)}${onLine(line)} is not part of the declared input encoding ${encoding}.`,
    suggested_fix: fix,
    ...(cp ? { symbol: cp } : {}),
    line,
    hint: `Switch inputenc from ${encoding} to utf8${at !== undefined ? ` on line ${at}` : ''} and compile again.`,
  };
};

/** Commands the default OT1 encoding lacks and T1 has. */
const T1_ONLY = ['guillemetleft', 'guillemetright', 'guillemotleft', 'guillemotright', 'guilsinglleft', 'guilsinglright', 'quotedblbase', 'quotesinglbase', 'textquotedbl', 'th', 'TH', 'dh', 'DH', 'dj', 'DJ', 'ng', 'NG', 'k', 'textogonek', 'textlangle', 'textrangle'];

export const encoding: Rule = ({ block, line }) => {
  const m = /^LaTeX Error: Command \\(\S+) unavailable in encoding OT1/.exec(block.message);
  if (!m?.[1] || !T1_ONLY.includes(m[1])) return undefined;
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const typed = lctx ? [...lctx.read.replace(/ $/, '')].at(-1) : undefined;
  const fix = `Add \\usepackage[T1]{fontenc} and \\usepackage{lmodern} ${PREAMBLE}: the default OT1 font encoding has no \\${m[1]}, and Latin Modern provides T1 fonts.`;
  const unicode = typed !== undefined && (typed.codePointAt(0) ?? 0) > 0x7f;
  return {
    error_class: unicode ? 'unsupported_unicode' : 'fatal_error',
    summary: unicode
      ? `The character ${typed} (${codepointOf(typed)})${onLine(line)} needs the T1 font encoding.`
      : `\\${m[1]}${onLine(line)} needs the T1 font encoding.`,
    suggested_fix: fix,
    suggested_package: 'fontenc',
    symbol: unicode ? codepointOf(typed) : `\\${m[1]}`,
    line,
    hint: 'Add \\usepackage[T1]{fontenc} and \\usepackage{lmodern} to the preamble and compile again.',
  };
};
