// The finding that names a package for an undefined command or environment: from the
// hand-written table, or from the TeX Live index with the probe's verdict.
import type { Compiler } from '../../compilers.js';
import type { Provider } from '../packages.js';
import type { Source } from '../source.js';
import { documentProvides, rankCandidates, readDocument, type Candidate, type NameKind } from '../candidates.js';
import type { TexCatalog } from '../catalog.js';
import { documentsLoading } from '../usage.js';
import type { Confidence, ErrorClass } from '../diagnosis.js';
import { onLine, otherEngine, PREAMBLE as PREAMBLE_TEXT, usepackage, verdictKey, type Finding, type RuleContext, type Verification } from './finding.js';

export function withPackage(provider: Provider, symbol: string, at: number | undefined, engine: Compiler, summary: string, kind: 'command' | 'environment', source?: Source): Finding {
  const line = usepackage(provider.package, provider.options);
  // Used in the preamble itself (or in a file the preamble inputs): the package must be loaded above that line of main.tex.
  const above = source?.placement(at);
  const PREAMBLE = above !== undefined ? `to the preamble above line ${above}${source?.file !== undefined ? ' of main.tex' : ''}` : PREAMBLE_TEXT;
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

/** A package the index proposes, how sure it is, and the probe that would settle it. */
export interface Indexed {
  provider: Provider;
  confidence: Confidence;
  verify?: Verification;
}

/**
 * The package the TeX Live index proposes for an undefined name, honouring a probe verdict.
 * undefined: the index has no definer (or is not loaded yet); 'loaded': the document already
 * loads a package that defines it, so the cause is something else; 'none': probes showed no
 * candidate gets TeX past it.
 */
export function fromIndex(ctx: RuleContext, kind: NameKind, name: string, at: number | undefined, preferred?: string): Indexed | 'loaded' | 'none' | undefined {
  const { catalog: cat, source, engine, verdicts } = ctx;
  if (!cat) return undefined;
  // The index says a loaded package defines it, yet TeX says it does not (an option, a condition):
  // only a probe compile can tell whether another package helps.
  const provided = source !== undefined && documentProvides(cat, source.document, name, kind, source.origin.project);
  if (provided) {
    // The index counts what a loaded class or package may load on request (KOMA-Script's
    // classes and scrlayer-scrpage): a name's one sure definer that the document does not load
    // itself is the suggestion, once a probe compile has shown it helps.
    const own = cat.definers(name, kind).filter((d) => d.sure && !d.package.endsWith('.cls') && !source.loads(d.package));
    const verdict = verdicts?.get(verdictKey(kind, name));
    if (own.length === 1 && own[0] && verdict === own[0].package) return { provider: { package: verdict, engines: cat.engines(verdict) }, confidence: 'verified' };
    if (own.length === 1 && own[0] && verdict === undefined && ctx.probing) {
      return { provider: { package: own[0].package, engines: cat.engines(own[0].package) }, confidence: 'unverified', verify: { kind, name, candidates: [own[0].package], needed: true, ...(source.mainLine(at) !== undefined ? { line: source.mainLine(at) } : {}) } };
    }
    if (!ctx.probing) return 'loaded';
  }
  const loads = source ? readDocument(cat, source.document, source.origin.project).loads : undefined;
  const ranked = rankCandidates(cat, name, kind, { engine, source: source?.document, ...(source?.origin.project ? { project: source.origin.project } : {}), ...(preferred ? { preferred } : {}) }).filter((c) => !loads?.has(c.package));
  const verdict = verdicts?.get(verdictKey(kind, name));
  if (verdict === null) return 'none';
  if (typeof verdict === 'string') return { provider: { package: verdict, engines: cat.engines(verdict) }, confidence: 'verified' };
  // Probes stopped before an answer: the best-ranked candidate no probe has ruled out.
  const top = verdict ? ranked.find((c) => !verdict.failed.includes(c.package)) : ranked[0];
  if (!top) return provided ? 'loaded' : verdict ? 'none' : undefined;
  const provider = { package: top.package, engines: top.engines };
  if (verdict) return { provider, confidence: 'unverified' };
  const clear = !provided && isClear(cat, ranked, engine);
  // A whole TeX Live defines many everyday names (\vect, \authorinfo) in some little-known
  // package: among several candidates, such a one is no suggestion, since the document most
  // likely meant a macro of its own.
  if (!clear && isObscure(cat, top, kind, name)) return provided ? 'loaded' : undefined;
  const verify: Verification = { kind, name, candidates: ranked.slice(0, 3).map((c) => c.package), needed: !clear };
  // The probe compiles main.tex: for a name in a file it inputs, up to that \input.
  const probeAt = source ? source.mainLine(at) : at;
  if (probeAt !== undefined) verify.line = probeAt;
  return { provider, confidence: clear ? 'certain' : 'unverified', verify };
}

/** The finding for an index suggestion: the package, how sure it is, and the probe to run when it is not. */
export function indexedFinding(indexed: Indexed, symbol: string, at: number | undefined, engine: Compiler, summary: string, kind: NameKind, source?: Source): Finding {
  const finding = withPackage(indexed.provider, symbol, at, engine, summary, kind, source);
  return { ...finding, confidence: indexed.confidence, ...(indexed.verify ? { verify: indexed.verify } : {}) };
}

/** Outside the core, loaded by fewer than two packages, covering nothing else the document lacks, and not what real documents load for the name. */
function isObscure(cat: TexCatalog, candidate: Candidate, kind: NameKind, name: string): boolean {
  return !cat.isCore(candidate.package) && cat.loaderCount(candidate.package) < 2 && candidate.coverage === 0 && documentsLoading(candidate.package, name, kind) === 0;
}

/**
 * The index's first choice needs no probe: it is defined when the package loads, works with
 * the engine, and is the only candidate that does, or defines more of the document's other
 * undefined names than any other (a deleted \usepackage takes its names with it). A bundle
 * that loads it and covers nothing more (mathsemantics around mathtools) is no rival.
 */
function isClear(cat: TexCatalog, ranked: readonly Candidate[], engine: Compiler): boolean {
  const [top, ...others] = ranked.filter((c) => !c.engines || c.engines.includes(engine));
  if (!top || top !== ranked[0] || !top.sure) return false;
  return others.every((c) => c.coverage < top.coverage || (c.coverage === top.coverage && c.coverage > 0 && cat.closure(c.package).has(top.package)));
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
