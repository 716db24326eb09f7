// Documents that need unrestricted shell escape. Engines run with TeX Live's restricted shell
// escape (job.ts SHELL_ESCAPE): \write18, \input|"…" and Lua's os.execute run only the programs
// of the image's shell_escape_commands, so a document that calls another program (epstopdf,
// inkscape through svg, gnuplot, a second pdflatex for TikZ externalisation, minted 2's
// pygmentize) gets the refusal in its log and usually a missing file later. The diagnosis says
// which command was refused and what to do instead.
import { escape, onLine, type Finding, type Rule } from './finding.js';

/** TeX Live's own list (texmf.cnf shell_escape_commands of the 2026 image; a test compares). */
export const RESTRICTED_PROGRAMS: readonly string[] = [
  'bibtex',
  'bibtex8',
  'extractbb',
  'gregorio',
  'kpsewhich',
  'l3sys-query',
  'latexminted',
  'makeindex',
  'memoize-extract.pl',
  'memoize-extract.py',
  'repstopdf',
  'r-mpost',
  'texosquery-jre8',
];

/** What the log says about shell escape before the error: the refused commands and the packages that warned. */
export interface ShellRefusals {
  commands: string[];
  packages: string[];
}

/**
 * pdfTeX and XeTeX: `runsystem(cmd)...disabled (restricted).` (or `...disabled.`); LuaTeX through
 * shellesc: `runsystem(cmd)...(Command execution disabled via shell_escape='p').`
 */
const REFUSED = /^runsystem\((.*)\)\.\.\.(?:disabled|\((?:specific )?command execution disabled)/i;
const WARNED = /^Package (\S+) Warning: .*(?:shell[- ]escape|write ?18)/i;
/** A package's own words for "this needs shell escape". */
const DEMANDS = /shell[- ]escape|write ?18|enabled? system calls/i;

/** The refusals and warnings in `lines` (the unwrapped log up to the error). */
export function shellRefusals(lines: readonly string[]): ShellRefusals {
  const commands: string[] = [];
  const packages: string[] = [];
  for (const line of lines) {
    const refused = REFUSED.exec(line)?.[1];
    if (refused !== undefined) commands.push(refused.trim());
    const warned = WARNED.exec(line)?.[1];
    if (warned) packages.push(warned);
  }
  return { commands, packages };
}

const LIST = `TeX Live's restricted list (${RESTRICTED_PROGRAMS.join(', ')})`;

export const shellEscape: Rule = ({ block, source, line, shell }) => {
  const msg = block.message;
  const piped = /^I can't find file `"?\|([^"']*)"?'/.exec(msg)?.[1]?.trim();
  if (piped !== undefined) {
    const at = source?.find(/\\input\s*\|/) ?? line;
    return refusal(`"${piped}"${onLine(at)} was refused`, piped, at, `Replace \\input|"${piped}"${onLine(at)} with the file its output would be, sent as an asset`);
  }
  const pkg = /^Package (\S+) Error/.exec(msg)?.[1];
  const found = /File `([^']+)' (?:not found|is missing)|Unable to load picture or PDF file '([^']+)'/.exec(msg);
  const missing = found?.[1] ?? found?.[2];
  const stem = missing?.replace(/^.*\//, '').replace(/\.[^.]*$/, '');
  const related = stem ? shell?.commands.findLast((cmd) => cmd.includes(stem)) : undefined;
  const warned = pkg !== undefined && shell?.packages.includes(pkg);
  if (!DEMANDS.test(msg) && !related && !warned) return undefined;
  return forCommand(related ?? (pkg !== undefined && pkg !== 'tikz' ? undefined : shell?.commands.at(-1)), pkg, missing, (pattern) => source?.find(pattern), line);
};

/**
 * For a log with no error of its own (the job wrote no PDF) whose only explanation is a refusal:
 * a package that warned it could not run its program, or a refused command.
 */
export function unexplainedRefusal(shell: ShellRefusals, find: (pattern: RegExp) => number | undefined): Finding | undefined {
  const pkg = shell.packages.at(-1);
  const command = pkg === undefined ? shell.commands.at(-1) : undefined;
  if (command === undefined && pkg === undefined) return undefined;
  return forCommand(command, pkg, undefined, find, undefined);
}

function forCommand(command: string | undefined, pkg: string | undefined, missing: string | undefined, find: (pattern: RegExp) => number | undefined, line: number | undefined): Finding {
  const program = command?.split(/\s+/)[0];
  const subject = (at: number | undefined) => (command !== undefined ? `"${command}"${onLine(at)} was refused` : `the package ${pkg}${onLine(at)} could not run its program`);
  const symbol = command ?? pkg ?? 'shell escape';
  if (program === 'epstopdf') {
    const at = find(/\\(?:immediate\s*)?\\?write18|\\ShellEscape/) ?? line;
    const figure = command!.split(/\s+/)[1] ?? 'figure.eps';
    return refusal(subject(at), symbol, at, `Change "epstopdf" to "repstopdf"${onLine(at)} (TeX Live's restricted epstopdf, which runs here), or drop the call and write \\includegraphics{${figure}} (an EPS asset is converted here)`);
  }
  if (pkg === 'minted') {
    const at = find(/\\usepackage\s*(\[[^\]]*\])?\s*\{minted[12]?\}/) ?? line;
    return refusal(subject(at), symbol, at, `Load minted 3 with \\usepackage{minted}${onLine(at)} (not minted2 or minted1): its latexminted is on TeX Live's restricted list and runs here`);
  }
  if (pkg === 'svg') {
    const at = find(/\\includesvg/) ?? line;
    const name = missing?.replace(/_svg-(?:tex|raw)\.pdf$/, '') ?? 'figure';
    return refusal(subject(at), symbol, at, `Write \\includegraphics{${name}.svg} instead of \\includesvg${onLine(at)} (an SVG asset is converted here)`);
  }
  if (pkg === 'tikz' || /tikzexternal/.test(command ?? '')) {
    const at = find(/\\tikzexternalize/) ?? line;
    return refusal(subject(at), symbol, at, `Remove \\tikzexternalize${onLine(at)} (the pictures are then typeset with the document), or send the externalised figures as assets`);
  }
  const at = (pkg !== undefined ? find(new RegExp(`\\{[^}]*\\b${escape(pkg)}\\b[^}]*\\}`)) : command !== undefined ? find(new RegExp(escape(command))) : undefined) ?? line;
  const made = missing ? ` ("${missing}")` : '';
  const make = program ? `Run "${program}" yourself and send what it makes${made}` : `Make the files the package ${pkg} needs${made} yourself and send them`;
  return refusal(subject(at), symbol, at, `${make} as assets, or use a program of ${LIST}`);
}

/** `subject`: what was refused, as a clause. */
function refusal(subject: string, symbol: string, at: number | undefined, fix: string): Finding {
  return {
    error_class: 'fatal_error',
    summary: `The document needs unrestricted shell escape: ${subject}. Only ${LIST} runs here.`,
    suggested_fix: `${fix}.`,
    symbol,
    line: at,
    hint: `${fix} and compile again.`,
  };
}
