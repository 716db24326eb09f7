// Undefined commands: the package that provides one, an option its package lacks, a command
// used outside the only environment that defines it, or \\renewcommand of nothing.
import { lastToken } from '../log.js';
import { COMMAND_PACKAGES } from '../packages.js';
import { rankCandidates } from '../candidates.js';
import { closest, KERNEL_COMMANDS } from '../names.js';
import { escape, onLine, usepackage, type Rule } from './finding.js';
import { fromIndex, indexedFinding, withOption, withPackage } from './suggest.js';

/** Commands a loaded package defines only inside one environment. */
const ONLY_INSIDE: Record<string, string> = {
  draw: 'tikzpicture', node: 'tikzpicture', fill: 'tikzpicture', filldraw: 'tikzpicture',
  coordinate: 'tikzpicture', clip: 'tikzpicture', shade: 'tikzpicture', shadedraw: 'tikzpicture',
  addplot: 'axis', addlegendentry: 'axis', State: 'algorithmic', Require: 'algorithmic',
  Ensure: 'algorithmic', If: 'algorithmic', For: 'algorithmic', While: 'algorithmic',
  Return: 'algorithmic', tcblower: 'tcolorbox', columnbreak: 'multicols',
};

const STUB_MESSAGE = /^(Not loaded|No multilingual package has been loaded)\.?$/;

/** Page styles of packages: LaTeX (since 2025) reports \pagestyle{fancy} without fancyhdr as an undefined \undefinedpagestyle. */
const PAGE_STYLES: Readonly<Record<string, string>> = { fancy: 'fancyhdr', fancyplain: 'fancyhdr', scrheadings: 'scrlayer-scrpage', 'plain.scrheadings': 'scrlayer-scrpage' };

/** The package page style a \pagestyle or \thispagestyle on `text` names, when one of PAGE_STYLES. */
export function pageStyle(text: string): { name: string; package: string } | undefined {
  const name = /\\(?:this)?pagestyle\s*\{\s*([^}\s]+)\s*\}/.exec(text)?.[1];
  const pkg = name ? PAGE_STYLES[name] : undefined;
  return name && pkg ? { name, package: pkg } : undefined;
}

export const undefinedCommand: Rule = (ctx) => {
  const { block, engine, source, line } = ctx;
  const top = block.context[0];
  // LaTeX defines \selectlanguage (and a few more) as an error until a language package loads:
  // "Not loaded." until 2024, "No multilingual package has been loaded." since, with the stub's
  // expansion (shown whole, or cut to "...") in the context.
  const stub = STUB_MESSAGE.test(block.message) ? /^(\\[A-Za-z]+) ?(->\\errhelp|\.\.\.)/.exec(top?.read ?? '')?.[1] : undefined;
  if (!stub && !/^Undefined control sequence/.test(block.message)) return undefined;
  const symbol = stub ?? (top ? lastToken(top.read) : undefined);
  if (!symbol?.startsWith('\\') || symbol.length < 2) return undefined;
  const name = symbol.slice(1);
  // Inside a macro expansion the name is written somewhere else: point at where it is written.
  const written = new RegExp(`\\\\${escape(name)}(?![A-Za-z@])`);
  const at = line !== undefined && source && !written.test(source.line(line)) ? (source.find(written) ?? line) : line;
  const style = symbol === '\\undefinedpagestyle' ? pageStyle(source?.line(at ?? 0) ?? '') : undefined;
  if (style && !source?.loads(style.package)) {
    // Set in the preamble itself: the package must come above that line.
    const above = at !== undefined && source?.beginDocument !== undefined && at < source.beginDocument ? ` above line ${at}` : '';
    const fix = `Add ${usepackage(style.package)} to the preamble${above}: it defines the page style "${style.name}" used${onLine(at)}.`;
    return { error_class: 'undefined_command', summary: `The page style "${style.name}"${onLine(at)} is not defined (TeX reports ${symbol}).`, suggested_fix: fix, suggested_package: style.package, symbol, line: at, hint: `Add ${usepackage(style.package)} to the preamble and compile again.` };
  }
  const provider = COMMAND_PACKAGES.get(name) ?? (name in ONLY_INSIDE ? { package: ONLY_INSIDE[name] === 'axis' ? 'pgfplots' : ONLY_INSIDE[name] === 'algorithmic' ? 'algpseudocode' : ONLY_INSIDE[name] === 'tikzpicture' ? 'tikz' : 'tcolorbox' } : undefined);
  const summary = `The command ${symbol}${onLine(at)} is not defined.`;

  if (provider?.options && source?.loads(provider.package)) return withOption(provider, symbol, at, source, summary, 'undefined_command');
  if (provider && source?.loads(provider.package)) {
    const env = ONLY_INSIDE[name];
    if (!env) return undefined; // loaded yet undefined: not something we can explain for sure
    const fix = `Move ${symbol}${onLine(at)} inside a \\begin{${env}} ... \\end{${env}} environment: ${provider.package} defines it only there.`;
    return { error_class: 'undefined_command', summary, suggested_fix: fix, symbol, line: at, hint: fix.replace(/:.*$/, ' and compile again.') };
  }
  // The table's choice, unless the index finds a package that also defines more of the
  // document's undefined names (amsrefs' \cites in a document that uses amsrefs throughout).
  // The table knows packages whose names the index cannot read (siunitx's units), so the
  // index must cover at least two more names to overrule it.
  const ranked = provider && !provider.options && !(name in ONLY_INSIDE) && ctx.catalog && source ? rankCandidates(ctx.catalog, name, 'command', { engine, source: source.document, ...(source.origin.project ? { project: source.origin.project } : {}), preferred: provider.package }) : [];
  const tableCoverage = ranked.find((c) => c.package === provider?.package)?.coverage ?? 0;
  const outranked = ranked[0] && ranked[0].package !== provider?.package && ranked[0].coverage >= tableCoverage + 2;
  if (provider && !outranked) return withPackage(provider, symbol, at, engine, summary, 'command', source);
  const indexed = fromIndex(ctx, 'command', name, at, provider?.package);
  if (indexed === undefined && provider) return withPackage(provider, symbol, at, engine, summary, 'command', source);
  if (indexed === 'loaded') return undefined;
  if (indexed && indexed !== 'none') return indexedFinding(indexed, symbol, at, engine, summary, 'command', source);

  // A package defines the very name asked for (\dddot): no edit to a different command (\ddot), whatever the probes said.
  const defined = ctx.catalog?.definers(name, 'command').some((d) => ctx.catalog?.has(d.package)) ?? false; // packages, not classes (bgteubner.cls's \\textbff)
  const near = defined ? undefined : closest(name, [...COMMAND_PACKAGES.keys(), ...KERNEL_COMMANDS]);
  const nearPackage = near ? COMMAND_PACKAGES.get(near)?.package : undefined;
  const defineAt = source?.beginDocument;
  const fix = near
    ? `Change ${symbol}${onLine(at)} to \\${near}${nearPackage && !source?.loads(nearPackage) ? ` and add ${usepackage(nearPackage)} to the preamble` : ''}; if you meant a command of your own, define it with \\newcommand{${symbol}}{...} in the preamble.`
    : `Define ${symbol} in the preamble with \\newcommand{${symbol}}{...}${defineAt ? ` (before line ${defineAt})` : ''}, or remove or correct it${onLine(at)}; ${indexed === 'none' ? 'no installed package that defines it got TeX past it in a test compile' : defined ? 'only little-known packages define it' : 'no package we know provides it'}.`;
  const hint = near
    ? `Change ${symbol}${onLine(at)} to \\${near} (or define ${symbol} with \\newcommand) and compile again.`
    : `Define ${symbol} with \\newcommand in the preamble or remove it${onLine(at)}, then compile again.`;
  return { error_class: 'undefined_command', summary, suggested_fix: fix, symbol, line: at, hint };
};

/** \renewcommand of a command that does not exist. */
export const renewUndefined: Rule = ({ block, line }) => {
  const m = /^LaTeX Error: (?:Command )?(\\\S+) undefined\.?$/.exec(block.message);
  if (!m?.[1]) return undefined;
  const symbol = m[1];
  const fix = `Use \\newcommand instead of \\renewcommand for ${symbol}${onLine(line)}: ${symbol} does not exist yet.`;
  return {
    error_class: 'undefined_command',
    summary: `${symbol} is redefined${onLine(line)} but was never defined.`,
    suggested_fix: fix,
    symbol,
    line,
    hint: `Change \\renewcommand to \\newcommand for ${symbol}${onLine(line)} and compile again.`,
  };
};
