// The finding that names a package for an undefined command or environment: from the
// hand-written table, or from the TeX Live index with the probe's verdict.
import type { Compiler } from '../../compilers.js';
import type { ErrorClass } from '../diagnosis.js';
import type { Provider } from '../packages.js';
import type { Source } from '../source.js';
import { documentProvides, rankCandidates, readDocument, type NameKind } from '../candidates.js';
import { onLine, otherEngine, PREAMBLE as PREAMBLE_TEXT, usepackage, verdictKey, type Finding, type RuleContext, type Verification } from './finding.js';

export function withPackage(provider: Provider, symbol: string, at: number | undefined, engine: Compiler, summary: string, kind: 'command' | 'environment', source?: Source): Finding {
  const line = usepackage(provider.package, provider.options);
  // Used in the preamble itself: the package must be loaded above that line.
  const begin = source?.beginDocument;
  const PREAMBLE = at !== undefined && begin !== undefined && at < begin ? `to the preamble above line ${at}` : PREAMBLE_TEXT;
  const needsEngine = provider.engines && !provider.engines.includes(engine);
  const what = kind === 'command' ? symbol : `the ${symbol} environment`;
  if (needsEngine && provider.engines) {
    const fix = `Add ${line} ${PREAMBLE} and compile with ${provider.engines.join(' or ')} (${otherEngine(provider.engines)} in the request): ${provider.package} provides ${what} and does not work with ${engine}.`;
    return {
      error_class: kind === 'command' ? 'undefined_command' : 'undefined_environment',
      summary: `${summary} It comes from the package ${provider.package}, which needs ${provider.engines.join(' or ')}.`,
      suggested_fix: fix,
      suggested_package: provider.package,
      symbol,
      line: at,
      hint: `Set "compiler" to "${provider.engines[0]}", add ${line} ${PREAMBLE.replace(/ \(.*\)$/, '')} and compile again.`,
    };
  }
  const fix = `Add ${line} ${PREAMBLE}: it provides ${what}.`;
  return {
    error_class: kind === 'command' ? 'undefined_command' : 'undefined_environment',
    summary: `${summary} It is provided by the package ${provider.package}, which the document does not load.`,
    suggested_fix: fix,
    suggested_package: provider.package,
    symbol,
    line: at,
    hint: `Add ${line} ${PREAMBLE.replace(/ \(.*\)$/, '')} and compile again.`,
  };
}

/**
 * The package the TeX Live index proposes for an undefined name, honouring a probe verdict.
 * undefined: the index has no definer (or is not loaded yet); 'loaded': the document already
 * loads a package that defines it, so the cause is something else; 'none': probes showed no
 * candidate gets TeX past it.
 */
export function fromIndex(ctx: RuleContext, kind: NameKind, name: string, at: number | undefined, preferred?: string): { provider: Provider; verify?: Verification } | 'loaded' | 'none' | undefined {
  const { catalog: cat, source, engine, verdicts } = ctx;
  if (!cat) return undefined;
  // The index says a loaded package defines it, yet TeX says it does not (an option, a condition):
  // only a probe compile can tell whether another package helps.
  const provided = source !== undefined && documentProvides(cat, source.text, name, kind);
  if (provided && !ctx.probing) return 'loaded';
  const loads = source ? readDocument(cat, source.text).loads : undefined;
  const ranked = rankCandidates(cat, name, kind, { engine, source: source?.text, ...(preferred ? { preferred } : {}) }).filter((c) => !loads?.has(c.package));
  const top = ranked[0];
  if (!top) return provided ? 'loaded' : undefined;
  const verdict = verdicts?.get(verdictKey(kind, name));
  if (verdict === null) return 'none';
  if (verdict !== undefined) return { provider: { package: verdict, engines: cat.engines(verdict) } };
  const verify: Verification = { kind, name, candidates: ranked.slice(0, 3).map((c) => c.package), needed: provided || ranked.length > 1 || !top.sure };
  if (at !== undefined) verify.line = at;
  return { provider: { package: top.package, engines: top.engines }, verify };
}

/** The package is loaded, but without the option that defines the name (xcolor's `table`). */
export function withOption(provider: Provider, symbol: string, at: number | undefined, source: Source, summary: string, error_class: ErrorClass): Finding {
  const loadedAt = source.usePackageLine(provider.package);
  const wanted = usepackage(provider.package, provider.options);
  const fix = `Load ${provider.package} with the ${provider.options} option: change its \\usepackage${onLine(loadedAt)} to ${wanted} (it provides ${symbol} only with that option).`;
  return {
    error_class,
    summary: `${summary} ${provider.package} is loaded without the ${provider.options} option that defines it.`,
    suggested_fix: fix,
    suggested_package: provider.package,
    symbol,
    line: at,
    hint: `Change the \\usepackage of ${provider.package}${onLine(loadedAt)} to ${wanted} and compile again.`,
  };
}
