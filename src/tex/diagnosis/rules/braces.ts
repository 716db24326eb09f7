// Braces: an argument never closed (runaway), a } too many or too few, \\left without \\right.
import { onLine, type Rule } from './finding.js';

export const runaway: Rule = ({ block, source, line }) => {
  // Robust commands print with a space in their name (`\\author  was complete`), and "use of
  // \\X." ends the sentence with a period that is not part of the name.
  const m = /^(?:Paragraph ended before (\\\S+)\s+was complete|File ended while scanning (use|definition|text) of (\\\S+))/.exec(block.message);
  if (!m) return undefined;
  const internal = (m[1] ?? m[3] ?? '').replace(/(?<=^\\.+)\.$/, '');
  let symbol: string | undefined = /@/.test(internal) ? undefined : internal;
  let at = line;
  if (source && block.runaway) {
    // TeX prints tokens with a space after control words: `\mathbb {R}` is `\mathbb{R}` in the source.
    const printed = block.runaway.replace(/(\\[A-Za-z@]+) (?=[^A-Za-z\s])/g, '$1').replace(/\s+/g, ' ').trim();
    const firstLine = printed.split(/ \\par\b/)[0] ?? printed;
    const candidates = [firstLine.slice(0, 40), firstLine.split(' ')[0] ?? ''];
    let needle = '';
    let found: number | undefined;
    for (const candidate of candidates) {
      if (candidate.length < 2) continue;
      found = source.locate(candidate, line);
      if (found !== undefined) {
        needle = candidate;
        break;
      }
    }
    if (found !== undefined) {
      at = found;
      const text = source.line(found);
      const idx = text.indexOf(needle.split(' ')[0] ?? needle);
      const before = /(\\[A-Za-z]+)\*?\s*(\[[^\]]*\])?\s*(\{[^{}]*\})?\s*$/.exec(text.slice(0, Math.max(0, idx)));
      if (before?.[1]) symbol = before[1];
    }
  }
  if (m[2] === 'definition') {
    const fix = `Close the braces of the definition of ${internal}${onLine(at)}: a } is missing.`;
    return { error_class: 'runaway_argument', summary: `The definition of ${internal}${onLine(at)} never ends: a closing brace is missing.`, suggested_fix: fix, symbol: internal, line: at, hint: `Add the missing } to the definition of ${internal}${onLine(at)} and compile again.` };
  }
  const what = symbol ? `the argument of ${symbol}` : 'an argument';
  const ended = m[1] ? 'a blank line (paragraph end)' : 'the end of the file';
  const fix = `Add the missing } that closes ${what}${at === undefined ? '' : ` starting on line ${at}`}; TeX reached ${ended} before it.`;
  return {
    error_class: 'runaway_argument',
    summary: `${what.charAt(0).toUpperCase() + what.slice(1)}${onLine(at)} is never closed.`,
    suggested_fix: fix,
    symbol,
    line: at,
    hint: `Add the missing } for ${what}${onLine(at)} and compile again.`,
  };
};

export const unbalanced: Rule = ({ block, line }) => {
  const msg = block.message;
  const base = { error_class: 'unbalanced_braces' as const, line };
  if (/^(Too many \}'s|Extra \}, or forgotten)/.test(msg)) {
    return { ...base, symbol: '}', summary: `There is a } without a matching {${onLine(line)}.`, suggested_fix: `Remove the extra }${onLine(line)} or add the { it should close.`, hint: `Remove the extra }${onLine(line)} (or add its {) and compile again.` };
  }
  if (/^Missing \} inserted/.test(msg)) {
    return { ...base, symbol: '}', summary: `A group or formula is not closed${onLine(line)}.`, suggested_fix: `Add the missing }${onLine(line)} so every { has its }.`, hint: `Add the missing }${onLine(line)} and compile again.` };
  }
  const arg = /^Argument of (\\\S+) has an extra \}/.exec(msg);
  if (arg?.[1]) {
    return { ...base, symbol: arg[1], summary: `The argument of ${arg[1]}${onLine(line)} has an unmatched }.`, suggested_fix: `Balance the braces in the argument of ${arg[1]}${onLine(line)}: write ${arg[1]}{...} with every { closed by a }.`, hint: `Balance the braces of ${arg[1]}${onLine(line)} and compile again.` };
  }
  if (/^Missing \\right\. inserted/.test(msg)) {
    return { ...base, symbol: '\\left', summary: `A \\left delimiter${onLine(line)} has no matching \\right.`, suggested_fix: `Add a matching \\right) (or \\right. for no delimiter) in the same formula as the \\left${onLine(line)}.`, hint: `Add the matching \\right for the \\left${onLine(line)} and compile again.` };
  }
  if (/^Extra \\right/.test(msg)) {
    return { ...base, symbol: '\\right', summary: `A \\right delimiter${onLine(line)} has no matching \\left.`, suggested_fix: `Add a \\left before the \\right${onLine(line)} in the same formula, or remove the \\right.`, hint: `Pair the \\right${onLine(line)} with a \\left and compile again.` };
  }
  return undefined;
};
