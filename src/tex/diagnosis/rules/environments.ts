// Environments: one that is not defined (theorems, beamer's, a package's), and one closed by
// the wrong \\end.
import { ENVIRONMENT_PACKAGES } from '../packages.js';
import { closest, KERNEL_ENVIRONMENTS } from '../names.js';
import { onLine, PREAMBLE, usepackage, type Rule } from './finding.js';
import { fromIndex, indexedFinding, withOption, withPackage } from './suggest.js';

const THEOREMS = ['theorem', 'lemma', 'corollary', 'proposition', 'definition', 'remark', 'example', 'conjecture', 'claim', 'exercise', 'problem', 'note', 'observation', 'fact', 'assumption', 'hypothesis', 'axiom', 'notation', 'question', 'solution'];
const BEAMER = ['frame', 'block', 'alertblock', 'exampleblock', 'columns', 'column', 'onlyenv', 'overlayarea', 'overprint'];

export const undefinedEnvironment: Rule = (ctx) => {
  const { block, engine, source, line } = ctx;
  const m = /^LaTeX Error: Environment (\S+) undefined/.exec(block.message);
  if (!m?.[1]) return undefined;
  const name = m[1];
  const symbol = name;
  const summary = `The environment "${name}"${onLine(line)} is not defined.`;
  const base = { error_class: 'undefined_environment' as const, symbol, line };
  if (THEOREMS.includes(name)) {
    const title = name.charAt(0).toUpperCase() + name.slice(1);
    const fix = `Add \\newtheorem{${name}}{${title}} ${PREAMBLE}: theorem-like environments must be declared before use.`;
    return { ...base, summary, suggested_fix: fix, hint: `Add \\newtheorem{${name}}{${title}} to the preamble and compile again.` };
  }
  if (BEAMER.includes(name)) {
    const fix = `Use \\documentclass{beamer} for slides: the ${name} environment${onLine(line)} exists only in the beamer class.`;
    return { ...base, summary, suggested_fix: fix, hint: 'Change the document class to beamer and compile again.' };
  }
  if (name === 'abstract' && source?.find(/\\documentclass(\[[^\]]*\])?\{(book|scrbook)\}/)) {
    const fix = `Replace \\begin{abstract}...\\end{abstract}${onLine(line)} with a \\chapter*{Abstract} or use \\documentclass{report}: the book class has no abstract environment.`;
    return { ...base, summary, suggested_fix: fix, hint: 'Use the report class (or a \\chapter*{Abstract}) instead of the abstract environment and compile again.' };
  }
  const provider = ENVIRONMENT_PACKAGES.get(name);
  if (provider?.options && source?.loads(provider.package)) return withOption(provider, name, line, source, summary, 'undefined_environment');
  if (provider && source?.loads(provider.package)) return undefined;
  if (provider) return withPackage(provider, name, line, engine, summary, 'environment', source);
  const indexed = fromIndex(ctx, 'environment', name, line);
  if (indexed === 'loaded') return undefined;
  if (indexed && indexed !== 'none') return indexedFinding(indexed, name, line, engine, summary, 'environment', source);
  // A package defines the very name asked for: no edit to a different environment.
  const defined = ctx.catalog?.definers(name, 'environment').some((d) => ctx.catalog?.has(d.package)) ?? false; // packages: a class cannot be added
  const near = defined ? undefined : closest(name, [...ENVIRONMENT_PACKAGES.keys(), ...KERNEL_ENVIRONMENTS]);
  const fix = near
    ? `Change "${name}"${onLine(line)} to "${near}" in both \\begin and \\end${ENVIRONMENT_PACKAGES.has(near) && !source?.loads(ENVIRONMENT_PACKAGES.get(near)?.package ?? '') ? ` and add ${usepackage(ENVIRONMENT_PACKAGES.get(near)?.package ?? '')} to the preamble` : ''}; if it is your own environment, define it with \\newenvironment{${name}}{...}{...} in the preamble.`
    : `Define it with \\newenvironment{${name}}{...}{...} in the preamble, or replace \\begin{${name}}/\\end{${name}}${onLine(line)}; ${indexed === 'none' ? 'no installed package that defines it got TeX past it in a test compile' : defined ? 'only little-known packages define it' : 'no package we know provides it'}.`;
  return {
    ...base,
    summary,
    suggested_fix: fix,
    hint: near
      ? `Change the environment "${name}"${onLine(line)} to "${near}" and compile again.`
      : `Define the environment "${name}" with \\newenvironment or replace it${onLine(line)}, then compile again.`,
  };
};

export const mismatchedEnvironment: Rule = ({ block, source, line }) => {
  if (/^(Extra \}, or forgotten \\endgroup|Missing \} inserted)/.test(block.message) && source && line !== undefined) {
    // \end{X} closed X's group while an environment opened inside X was still open.
    const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
    const closer = lctx ? /\\end\s*\{([^}]+)\}\s*$/.exec(lctx.read)?.[1] : undefined;
    const open = source.openEnvironments(line);
    const inner = open.at(-1);
    if (closer && inner && inner.name !== closer && open.some((e) => e.name === closer)) {
      const fix = `Add \\end{${inner.name}} before \\end{${closer}} on line ${line}: the ${inner.name} environment opened on line ${inner.line} is never closed.`;
      return {
        error_class: 'mismatched_environment',
        summary: `\\begin{${inner.name}} (line ${inner.line}) is still open when \\end{${closer}} is reached on line ${line}.`,
        suggested_fix: fix,
        symbol: inner.name,
        line,
        hint: `Add \\end{${inner.name}} before line ${line} and compile again.`,
      };
    }
  }
  const m = /^LaTeX Error: \\begin\{([^}]+)\} (?:on input line (\d+) )?ended by \\end\{([^}]+)\}/.exec(block.message);
  if (!m?.[1] || !m[3]) return undefined;
  const [, opened, openedAt, closer] = m;
  const since = openedAt ? ` (opened on line ${openedAt})` : '';
  const summary = `\\begin{${opened}}${since} is closed by \\end{${closer}}${onLine(line)}.`;
  const base = { error_class: 'mismatched_environment' as const, summary, line };
  if (opened === 'document') {
    const fix = `Remove the \\end{${closer}}${onLine(line)}: no \\begin{${closer}} is open there (or add the missing \\begin{${closer}} before it).`;
    return { ...base, symbol: closer, suggested_fix: fix, hint: `Remove the stray \\end{${closer}}${onLine(line)} and compile again.` };
  }
  const enclosing = closer === 'document' || (line !== undefined && source?.openEnvironments(line).some((e) => e.name === closer));
  if (enclosing) {
    const fix = `Add \\end{${opened}} before \\end{${closer}}${onLine(line)}: the ${opened} environment${since} is never closed.`;
    return { ...base, symbol: opened, suggested_fix: fix, hint: `Add \\end{${opened}} before line ${line ?? '?'} and compile again.` };
  }
  const fix = source
    ? `Change \\end{${closer}}${onLine(line)} to \\end{${opened}} to match \\begin{${opened}}${since}.`
    : `Change \\end{${closer}}${onLine(line)} to \\end{${opened}}${since}; if the ${closer} environment encloses it, add \\end{${opened}} before that line instead.`;
  return { ...base, symbol: opened, suggested_fix: fix, hint: `Change \\end{${closer}}${onLine(line)} to \\end{${opened}} and compile again.` };
};
