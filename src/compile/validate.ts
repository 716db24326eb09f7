// Validate (docs/api.md, "Validate"): what a compile request would run into, found without
// running TeX and without charging. The request rules and the plan (compiler, size, assets)
// are the compile's own checks; then the template security policy for a placeholder source,
// chktex, classes and packages not installed here, and files the document reads that the
// request does not carry. Each finding says whether the compile would fail on it.
import type { Static } from '@sinclair/typebox';
import { tierOf, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { invalidField, isServiceError, type ServiceError } from '../errors.js';
import { links } from '../links.js';
import type { Counters } from '../quota/counters.js';
import { chargeValidate } from '../quota/validate-limit.js';
import { catalog, ensureCatalog } from '../tex/diagnosis/catalog.js';
import { runChktex } from '../tex/lint/chktex.js';
import { candidateNames, installedFiles, MAX_SUGGESTED_LOADS, missingLoads, type FileUse, type SourceFacts } from '../tex/lint/loads.js';
import { checkProjectFiles, type ProjectFiles } from './files.js';
import { checkRequest } from './rules.js';
import type { AssetResolver, ConversionMeter } from '../assets/resolver.js';
import { FairUse, type FairTicket } from '../quota/fair-use.js';
import { ValidateGate } from './validate-gate.js';
import { checkValidateLimits } from './validate-limits.js';
import type { ValidateBody, ValidateFinding, ValidateResponse } from './validate-schemas.js';

type Finding = Static<typeof ValidateFinding>;
type Input = Static<typeof ValidateBody>;

export interface ValidateDeps {
  config: Config;
  clock: Clock;
  counters: Counters;
  /** The compile's asset resolver. */
  assets: AssetResolver;
  /**
   * The template security policy a placeholder source must pass (templates/liquid.ts
   * checkTemplate), handed in by the assembly: templates/ sits above compile/.
   */
  templatePolicy: (source: string) => void;
}

/** A refusal the compile would answer with, as a finding. */
export function refusalFinding(kind: 'request' | 'template', err: ServiceError): Finding {
  const { error: _code, message: _message, ...details } = err.body();
  const line = typeof details.line === 'number' ? { line: details.line } : {};
  return { kind, severity: 'error', code: err.code, message: err.message, ...line, details };
}

/** How long a validate waits for the TeX Live index while it is first built (then `packages` is left out of `checked`). */
const INDEX_WAIT_MS = 15_000;

const rank = (f: Finding) => (f.severity === 'error' ? 0 : 1);

type Read = { name: string; text: string } & SourceFacts;

export class ValidateService {
  private readonly fair: FairUse;
  /** One gate for the process: validate's reading and sandbox runs take turns (validate-gate.ts). */
  private readonly gate = new ValidateGate();

  constructor(private readonly deps: ValidateDeps) {
    this.fair = new FairUse(deps.counters, deps.clock, deps.config);
  }

  async validate(caller: Caller, input: Input): Promise<Static<typeof ValidateResponse>> {
    if (typeof input !== 'object' || input === null) throw invalidField('body', 'type', 'must be object');
    const { latex } = input;
    if (latex === undefined || latex === null) throw invalidField('latex', 'required', 'is required');
    if (typeof latex !== 'string') throw invalidField('latex', 'type', 'must be a string');
    let project: ProjectFiles = { files: [], binary: [], bytes: 0, skipped: [] };
    let projectRefusal: unknown;
    try {
      project = checkProjectFiles(input.files);
    } catch (err) {
      projectRefusal = err;
    }
    const texts = [{ name: 'main.tex', text: latex }, ...project.files.filter((f) => /\.(tex|sty|cls)$/.test(f.name)).map((f) => ({ name: f.name, text: f.data.toString('utf8') }))];
    return this.gate.run(() => this.admitted(caller, input, latex, project, projectRefusal, texts));
  }

  private async admitted(caller: Caller, input: Input, latex: string, project: ProjectFiles, projectRefusal: unknown, texts: Array<{ name: string; text: string }>): Promise<Static<typeof ValidateResponse>> {
    const { config, clock, counters } = this.deps;
    // Before anything is counted or run: a source beyond what validate reads costs nothing.
    const facts = await checkValidateLimits(texts, tierOf(caller), links(config).upgradeUrl);
    const read = texts.map((t, i) => ({ ...t, ...(facts[i] as SourceFacts) }));
    await chargeValidate(counters, clock.now(), caller, config.validatePerMinute);
    // Its sandbox runs (chktex, SVG and EPS conversion) hold an in-flight slot as a compile does.
    const fair = await this.fair.admit(caller);
    try {
      return await this.check(caller, input, latex, project, projectRefusal, read, fair);
    } finally {
      // Only the time of sandbox runs that failed was spent: a report is always delivered.
      await fair.finish(false);
    }
  }

  private async check(caller: Caller, input: Input, latex: string, project: ProjectFiles, projectRefusal: unknown, texts: Read[], fair: FairTicket): Promise<Static<typeof ValidateResponse>> {
    const { config } = this.deps;
    const findings: Finding[] = [];
    const checked = ['request'];
    const refusal = (kind: 'request' | 'template', err: unknown) => {
      if (!isServiceError(err) || err.code === 'validation_failed') throw err;
      findings.push(refusalFinding(kind, err));
    };
    try {
      if (projectRefusal !== undefined) throw projectRefusal;
      const request = checkRequest(input, tierOf(caller), links(config).upgradeUrl, caller.kind === 'account' && config.previews);
      if (request.sizePreview) {
        findings.push({ kind: 'request', severity: 'warning', message: 'The source is over the plan limit: it compiles as a size preview (a truncated PDF).' });
      }
    } catch (err) {
      refusal('request', err);
      // checkRequest stops at its first refusal; the compiler is checked on its own too, so a
      // source that is not LaTeX yet still learns that its compiler is not in the plan.
      if (isServiceError(err) && err.code !== 'compiler_not_available') {
        try {
          checkRequest({ latex: '\\documentclass{article}', compiler: input.compiler }, tierOf(caller), links(config).upgradeUrl);
        } catch (compilerErr) {
          refusal('request', compilerErr);
        }
      }
    }
    let assetNames: string[] = [];
    try {
      const meter: ConversionMeter = { begin: async () => undefined, spent: (ms, failed) => failed && fair.spend(ms) };
      assetNames = (await this.deps.assets.forCompile(caller, { assets: input.assets, use_stored_assets: input.use_stored_assets, binary: project.binary }, meter)).files.map((f) => f.name);
    } catch (err) {
      refusal('request', err);
    }
    if (input.placeholder_engine === 'liquid') {
      checked.push('template');
      try {
        this.deps.templatePolicy(latex);
      } catch (err) {
        refusal('template', err);
      }
    }

    const started = performance.now();
    try {
      for (const w of await runChktex(latex, { isolate: config.sandbox })) {
        findings.push({ kind: 'chktex', severity: 'warning', message: w.message, line: w.line, column: w.column, chktex: w.number });
      }
      checked.push('chktex');
    } catch {
      // chktex missing or stuck: the other checks still answer, and `checked` says it did not run.
      fair.spend(performance.now() - started);
    }
    // The index is loaded at start (compile service); a server that is still building it waits a little.
    await Promise.race([ensureCatalog(config.texIndexDir), new Promise((resolve) => setTimeout(resolve, INDEX_WAIT_MS).unref())]);
    const loadsChecked = await this.loads(texts, findings);
    if (loadsChecked) checked.push('packages');
    await this.files(texts, new Set([...project.files.map((f) => f.name), ...assetNames]), findings);
    checked.push('files');
    // Errors first (what must change for the compile to succeed), each kind in source order.
    findings.sort((a, b) => rank(a) - rank(b) || (a.line ?? 0) - (b.line ?? 0));
    return { valid: !findings.some((f) => f.severity === 'error'), findings, checked };
  }

  private async loads(texts: Read[], findings: Finding[]): Promise<boolean> {
    const budget = { suggestions: MAX_SUGGESTED_LOADS };
    for (const { name: file, loads } of texts) {
      const missing = await missingLoads(loads, catalog(), budget);
      if (!missing) return false;
      for (const m of missing) {
        const what = m.kind === 'class' ? `Class ${m.name}` : `Package ${m.name}`;
        const closest = m.suggestions.length ? ` Closest installed: ${m.suggestions.join(', ')}.` : '';
        findings.push({
          kind: m.kind === 'class' ? 'missing_class' : 'missing_package',
          severity: 'error',
          message: `${what} is not installed here.${closest}`,
          name: m.name,
          line: m.line,
          suggestions: m.suggestions,
          ...(file === 'main.tex' ? {} : { file }),
        });
      }
    }
    return true;
  }

  private async files(texts: Read[], carried: Set<string>, findings: Finding[]): Promise<void> {
    const unresolved: Array<{ use: FileUse; file: string; names: string[] }> = [];
    // One finding per file read, at its first line (readSource): the same \input a thousand times is one fix.
    for (const { name: file, uses } of texts) {
      for (const use of uses) {
        const names = candidateNames(use);
        if (!names.some((n) => carried.has(n))) unresolved.push({ use, file, names });
      }
    }
    const installed = await installedFiles([...new Set(unresolved.flatMap((u) => u.names))]);
    for (const { use, file, names } of unresolved) {
      if (names.some((n) => installed.has(n))) continue;
      const where = use.command === 'includegraphics' ? 'in `assets` or `use_stored_assets`' : 'in `files`';
      findings.push({
        kind: 'missing_file',
        severity: 'error',
        message: `\\${use.command}{${use.name}} reads a file the request does not carry: send it ${where}.`,
        name: use.name,
        line: use.line,
        ...(file === 'main.tex' ? {} : { file }),
      });
    }
  }
}
