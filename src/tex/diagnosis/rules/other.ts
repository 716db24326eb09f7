// Certain errors of their own kind: preamble-only commands, option clashes, stray & and \\item,
// double scripts, [H] without float, redefinitions, colours, fonts, endless recursion.
import { lastToken } from '../log.js';
import { ENVIRONMENT_PACKAGES } from '../packages.js';
import { escape, onLine, PREAMBLE, type Finding, type Rule } from './finding.js';
import { withPackage } from './suggest.js';

export const other: Rule = ({ block, source, line, blocks, engine: ctxEngine }) => {
  const msg = block.message;
  const fatal = (symbol: string | undefined, summary: string, fix: string, hint: string, at = line): Finding => ({ error_class: 'fatal_error', symbol, summary, suggested_fix: fix, line: at, hint });

  if (/^LaTeX Error: Can be used only in preamble/.test(msg)) {
    const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
    const cmd = lctx ? lastToken(lctx.read) : undefined;
    const written = line !== undefined && cmd?.startsWith('\\') ? new RegExp(`${escape(cmd)}\\s*(\\[[^\\]]*\\])?\\s*(\\{[^}]*\\})?`).exec(source?.line(line) ?? '')?.[0] : undefined;
    const what = written ?? (cmd?.startsWith('\\') ? cmd : 'the command');
    return fatal(cmd?.startsWith('\\') ? cmd : undefined, `${what}${onLine(line)} is only allowed in the preamble.`, `Move ${what}${onLine(line)} above \\begin{document}${source?.beginDocument ? ` (line ${source.beginDocument})` : ''}.`, `Move ${what}${onLine(line)} into the preamble and compile again.`);
  }
  const clash = /^LaTeX Error: Option clash for package (\S+)\./.exec(msg);
  if (clash?.[1]) {
    const pkg = clash[1];
    const at = (line !== undefined ? source?.usePackageLines(pkg).filter((n) => n <= line).at(-1) : undefined) ?? line;
    return fatal(pkg, `The package ${pkg} is loaded a second time${onLine(at)} with options the first load did not have.`, `Load ${pkg} once, with all options in a single \\usepackage[...]{${pkg}} (remove the one${onLine(at)} and move its options to the first), or put \\PassOptionsToPackage{...}{${pkg}} before \\documentclass when a class loads it.`, `Merge the \\usepackage lines of ${pkg} into one with all options and compile again.`, at);
  }
  if (/^Misplaced alignment tab character &/.test(msg)) {
    const open = line !== undefined ? source?.openEnvironments(line, '&') : undefined;
    const env = open?.at(-1);
    if (env && env.name !== 'document') {
      // LaTeX has plain-TeX \pmatrix and \cases, so \begin{pmatrix} without amsmath fails only at the first &.
      const provider = ENVIRONMENT_PACKAGES.get(env.name);
      if (provider && !source?.loads(provider.package)) {
        return withPackage(provider, env.name, line, ctxEngine, `The ${env.name} environment${onLine(env.line)} is not defined by LaTeX itself (its first & fails).`, 'environment', source);
      }
      return undefined; // an & inside an environment: not certainly a literal ampersand
    }
    return fatal('&', `A & outside a table or alignment${onLine(line)}.`, `Write \\& for a literal ampersand${onLine(line)}, or put the & inside a tabular/align environment.`, `Replace & with \\&${onLine(line)} and compile again.`);
  }
  if (/^Extra alignment tab has been changed to \\cr/.test(msg)) {
    return fatal('&', `A table row${onLine(line)} has more cells than the table has columns.`, `Remove the extra & from the row${onLine(line)}, or add a column to the column specification of the tabular.`, `Make the row${onLine(line)} have as many cells as the tabular has columns and compile again.`);
  }
  if (/^LaTeX Error: Lonely \\item/.test(msg)) {
    return fatal('\\item', `\\item${onLine(line)} is not inside a list.`, `Put \\item${onLine(line)} inside \\begin{itemize} ... \\end{itemize} (or enumerate/description).`, `Wrap the \\item lines${onLine(line)} in an itemize environment and compile again.`);
  }
  if (/^LaTeX Error: There's no line here to end/.test(msg)) {
    // \\ looks ahead for * or [, so TeX may report the next line.
    const at = line !== undefined && source && !/\\\\/.test(source.line(line)) ? (source.findBack(/\\\\/, line - 1) ?? line) : line;
    return fatal('\\\\', `\\\\${onLine(at)} ends a line where there is none (at the start of a paragraph or after a blank line).`, `Remove the \\\\${onLine(at)}; separate paragraphs with a blank line, or use \\vspace{...} for extra space.`, `Remove the \\\\${onLine(at)} and compile again.`, at);
  }
  const dbl = /^Double (superscript|subscript)/.exec(msg);
  if (dbl?.[1]) {
    const c = dbl[1] === 'superscript' ? '^' : '_';
    return fatal(c, `Two ${dbl[1]}s in a row${onLine(line)}.`, `Group the ${dbl[1]}s with braces${onLine(line)}: write x${c}{a${c}b} or {x${c}a}${c}b instead of x${c}a${c}b.`, `Add braces to the double ${dbl[1]}${onLine(line)} and compile again.`);
  }
  const floatOption = /^LaTeX Error: Unknown float option `H'/.exec(msg);
  if (floatOption) {
    return { ...fatal('H', `The float placement [H]${onLine(line)} needs the float package.`, `Add \\usepackage{float} ${PREAMBLE}: it provides the [H] placement.`, 'Add \\usepackage{float} to the preamble and compile again.'), suggested_package: 'float' };
  }
  const defined = /^LaTeX Error: Command (\\\S+) already defined/.exec(msg);
  if (defined?.[1]) {
    const cmd = defined[1];
    return fatal(cmd, `${cmd} is defined again${onLine(line)} but already exists.`, `Rename your command${onLine(line)} (e.g. \\my${cmd.slice(1)}) or use \\renewcommand{${cmd}} to replace the existing one.`, `Use \\renewcommand for ${cmd}${onLine(line)} (or a new name) and compile again.`);
  }
  if (/^You can't use `macro parameter character #'/.test(msg)) {
    return fatal('#', `A # appears in text${onLine(line)}.`, `Write \\# for a literal # sign${onLine(line)}.`, `Replace # with \\#${onLine(line)} and compile again.`);
  }
  const color = /^Package xcolor Error: Undefined color `([^']+)'/.exec(msg);
  if (color?.[1]) {
    return fatal(color[1], `The color "${color[1]}"${onLine(line)} is not defined.`, `Define it in the preamble with \\definecolor{${color[1]}}{HTML}{RRGGBB}, or use a predefined name (red, green, blue, cyan, magenta, yellow, black, gray, white, darkgray, lightgray, brown, lime, olive, orange, pink, purple, teal, violet).`, `Define the color "${color[1]}" with \\definecolor in the preamble and compile again.`);
  }
  if (/^LaTeX Error: No \\title given/.test(msg)) {
    return fatal('\\title', `\\maketitle${onLine(line)} is used but no \\title was given.`, `Add \\title{...} ${PREAMBLE}, or remove \\maketitle${onLine(line)}.`, 'Add \\title{...} to the preamble and compile again.');
  }
  if (/^Illegal unit of measure/.test(msg)) {
    return fatal(undefined, `A length${onLine(line)} has no unit.`, `Give the length${onLine(line)} a unit, e.g. 2cm, 10pt, 0.5\\textwidth.`, `Add a unit (cm, pt, \\textwidth) to the length${onLine(line)} and compile again.`);
  }
  if (/^LaTeX Error: Too many unprocessed floats/.test(msg)) {
    return fatal(undefined, `Too many figures and tables are waiting to be placed${onLine(line)}.`, `Add \\clearpage after a few figures/tables before line ${line ?? '?'}, or use the [H] placement of the float package.`, `Add \\clearpage between the figures before line ${line ?? '?'} and compile again.`);
  }
  if (/^Emergency stop/.test(msg) && blocks.every((b) => b === block || /Emergency stop|Fatal error occurred/.test(b.message)) && block.context.some((c) => /^<\*>/.test(c.read))) {
    // The file ended without \end{document}: TeX waits for more input and stops.
    if (source && !source.find(/\\end\s*\{document\}/)) {
      return fatal('\\end{document}', 'The document never ends: \\end{document} is missing.', 'Add \\end{document} as the last line of main.tex.', 'Add \\end{document} at the end of main.tex and compile again.', undefined);
    }
  }
  const font = /Font (\S+) at \d+ not found|Font \\\S+=(\S+) at [\d.]+pt not loadable/.exec(msg);
  const fontName = font?.[1] ?? font?.[2];
  if (fontName && /^(ec|tc)[a-z]{2}\d{3,4}$/.test(fontName)) {
    // T1/TS1 Computer Modern (EC) fonts exist here only as METAFONT sources; Latin Modern has them as Type 1.
    return {
      ...fatal(fontName, `The T1/TS1 Computer Modern font ${fontName} could not be loaded on this server.`, `Add \\usepackage{lmodern} ${PREAMBLE}: Latin Modern provides the same fonts in the T1 and TS1 encodings.`, 'Add \\usepackage{lmodern} to the preamble and compile again.', source?.find(/\\usepackage\s*\[[^\]]*T1[^\]]*\]\s*\{fontenc\}/) ?? line),
      suggested_package: 'lmodern',
    };
  }
  if (/^TeX capacity exceeded/.test(msg)) {
    const rec = block.context.map((c) => /^(\\[A-Za-z@]+) ?->(.*)$/.exec(c.read)).find((r) => r?.[1] && r[2]?.includes(r[1]));
    if (rec?.[1]) {
      const cmd = rec[1];
      const at = source?.find(new RegExp(`\\\\(re)?newcommand\\*?\\s*\\{?\\\\${escape(cmd.slice(1))}(?![A-Za-z@])`)) ?? line;
      return fatal(cmd, `${cmd} calls itself without end.`, `Change the definition of ${cmd}${onLine(at)} so it does not use ${cmd} inside itself (to extend a command, save the old one first with \\let\\old${cmd.slice(1)}${cmd}).`, `Remove the self-reference from the definition of ${cmd}${onLine(at)} and compile again.`, at);
    }
  }
  return undefined;
};
