// Math outside math mode: a math-only command in text, a formula never closed, a blank line in a display.
import { commandBefore } from '../log.js';
import { onLine, type Rule } from './finding.js';

export const missingMath: Rule = ({ block, source, line }) => {
  const only = /^LaTeX Error: (\\\S+) allowed only in math mode/.exec(block.message);
  if (only?.[1]) {
    const fix = `Put ${only[1]}${onLine(line)} inside math: $${only[1]}{...}$ in text, or inside an equation.`;
    return {
      error_class: 'missing_math_mode',
      summary: `${only[1]}${onLine(line)} is a math command used outside math.`,
      suggested_fix: fix,
      symbol: only[1],
      line,
      hint: `Wrap ${only[1]}${onLine(line)} in $...$ and compile again.`,
    };
  }
  if (!/^Missing \$ inserted/.test(block.message)) return undefined;
  const paragraphEnd = block.context.some((c) => /^<to be read again>/.test(c.read) && /^\\par\b/.test(c.rest));
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const inText = block.context.find((c) => !/^<(inserted text|to be read again|recently read)>/.test(c.read));
  const token = inText ? commandBefore(inText.read) : undefined;
  if (paragraphEnd || (lctx && lctx.read.replace(/^l\.\d+/, '').trim() === '')) {
    // The paragraph ended inside math: a blank line in a display, or a $ never closed.
    const blank = line !== undefined && source !== undefined && source.line(line).trim() === '';
    const opened = line !== undefined && source ? source.findBack(/^(?:[^$\\]|\\.)*\$(?:(?:[^$\\]|\\.)*\$(?:[^$\\]|\\.)*\$)*(?:[^$\\]|\\.)*$/, line - 1) : undefined;
    if (blank && source) {
      const inDisplay = source.openEnvironments(line ?? 0).at(-1);
      if (inDisplay && inDisplay.name !== 'document') {
        const fix = `Remove the blank line ${line} inside the ${inDisplay.name} environment (opened on line ${inDisplay.line}): math may not contain an empty line.`;
        return { error_class: 'missing_math_mode', summary: `Blank line ${line} is inside the ${inDisplay.name} formula.`, suggested_fix: fix, symbol: '$', line, hint: `Remove the blank line ${line} inside the ${inDisplay.name} environment and compile again.` };
      }
    }
    if (opened !== undefined) {
      const fix = `Close the formula opened with $ on line ${opened}: add the missing $ where the formula ends (before the paragraph ends on line ${line ?? '?'}).`;
      return { error_class: 'missing_math_mode', summary: `The $ on line ${opened} opens a formula that is never closed.`, suggested_fix: fix, symbol: '$', line: opened, hint: `Add the closing $ to the formula on line ${opened} and compile again.` };
    }
    const fix = `Close the formula that is still open at line ${line ?? '?'} (a $ or \\) is missing before the paragraph ends), or remove the blank line inside the math environment.`;
    return {
      error_class: 'missing_math_mode',
      summary: `A formula is still open where the paragraph ends${onLine(line)}.`,
      suggested_fix: fix,
      symbol: '$',
      line,
      hint: `Close the open formula before line ${line ?? '?'} (add the missing $ or remove the blank line in the math) and compile again.`,
    };
  }
  const what = token ? `${token}` : 'a math-only symbol';
  const fix = `Put the formula containing ${what}${onLine(line)} in math mode: write it as $...$ (for example $x^2$, $a_i$, $\\alpha$); for literal characters write \\_ , \\^{} or \\textasciicircum.`;
  return {
    error_class: 'missing_math_mode',
    summary: `${what}${onLine(line)} may only be used in math mode.`,
    suggested_fix: fix,
    symbol: token,
    line,
    hint: `Wrap the formula with ${what}${onLine(line)} in $...$ and compile again.`,
  };
};
