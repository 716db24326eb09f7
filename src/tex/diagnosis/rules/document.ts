// A document whose \\begin{document} is missing, or that has text in its preamble.
import type { Rule } from './finding.js';
import { onLine } from './finding.js';

/**
 * A document without \begin{document} fails somewhere in what should be its body, with
 * whatever error the first body command causes there (a KOMA letter's \phonename, say):
 * whatever TeX said, the missing line is the cause.
 */
export const absentBeginDocument: Rule = (ctx) => {
  const { source } = ctx;
  if (!source || source.beginDocument !== undefined || source.find(/\\documentclass/) === undefined) return undefined;
  if (/^LaTeX Error: Missing \\begin\{document\}/.test(ctx.block.message)) return missingBeginDocument(ctx);
  return missingBeginDocument({ ...ctx, block: { ...ctx.block, message: 'LaTeX Error: Missing \\begin{document}.', context: [] } });
};

export const missingBeginDocument: Rule = ({ block, source, line }) => {
  if (!/^LaTeX Error: Missing \\begin\{document\}/.test(block.message)) return undefined;
  const begin = source?.beginDocument;
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const text = lctx ? (lctx.read.replace(/^l\.\d+ /, '').trim().slice(-1) + lctx.rest).trim().slice(0, 40) : '';
  const what = text ? ` ("${text}")` : '';
  const fix =
    source && begin === undefined
      ? `Add \\begin{document} after the preamble (before line ${line ?? '?'})${source.find(/\\end\s*\{document\}/) === undefined ? ' and \\end{document} at the end of the file' : ''}.`
      : `Move the text${what}${onLine(line)} below \\begin{document}${begin ? ` (line ${begin})` : ''} or delete it: the preamble may only contain commands.`;
  return {
    error_class: 'missing_begin_document',
    summary: `Text${what}${onLine(line)} appears before \\begin{document}.`,
    suggested_fix: fix,
    symbol: '\\begin{document}',
    line,
    hint: fix.replace(/:.*$/, '').replace(/\.$/, '') + ' and compile again.',
  };
};
