// What validate reads at most (docs/api.md, "Validate"): validate is free and keyless, and its
// checks run on the service's event loop, so a request beyond what any real document has is
// refused before anything runs or is counted, instead of being read. The limits are far above
// real documents (figures below) and checked in one linear pass over the texts.
import { errors, validationFailed } from '../errors.js';
import { PLAN_NAMES, PLANS } from '../quota/plans.js';
import { readSource, type SourceFacts } from '../tex/lint/loads.js';

export const VALIDATE_LIMITS = {
  /** Bytes of latex and text files together: the largest source any plan compiles (Business, 1 MB). */
  bytes: Math.max(...PLAN_NAMES.map((plan) => PLANS[plan].maxLatexBytes)),
  /** Lines of latex and text files together: a 1 MB thesis of 40-character lines has 25,000. */
  lines: 100_000,
  /** Classes and packages loaded (\documentclass, \usepackage, \RequirePackage entries): heavy preambles load about 100. */
  loads: 500,
  /** Characters of one class or package name: TeX Live's longest is under 40; a local path has room. */
  nameLength: 128,
  /** Distinct files read (\input, \include, \includegraphics, bibliographies): a book with 1,000 figures fits. */
  fileNames: 2_000,
} as const;

const field = (file: string) => (file === 'main.tex' ? 'latex' : `files.${file}`);

/**
 * Refuses (413 latex_too_large, 422 validation_failed) a request validate would not read; else
 * returns what each text loads and reads (read once, and the event loop given back between texts).
 */
export async function checkValidateLimits(texts: ReadonlyArray<{ name: string; text: string }>, plan: string, upgradeUrl: string): Promise<SourceFacts[]> {
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t.text, 'utf8'), 0);
  if (bytes > VALIDATE_LIMITS.bytes) {
    throw errors.latex_too_large(`The source is ${bytes} bytes; validate reads at most ${VALIDATE_LIMITS.bytes} bytes, the largest source any plan compiles.`, {
      limit: VALIDATE_LIMITS.bytes,
      size_bytes: bytes,
      plan,
      plan_required: null,
      upgrade_url: upgradeUrl,
      retryable: false,
    });
  }
  let lines = 0;
  let loads = 0;
  const files = new Set<string>();
  const refuse = (name: string, rule: string, limit: number, message: string) => validationFailed([{ field: field(name), rule, limit, message }], { lead: 'Validate does not read this source' });
  for (const { name, text } of texts) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
    if (lines + texts.length > VALIDATE_LIMITS.lines) throw refuse(name, 'maxLines', VALIDATE_LIMITS.lines, `has more than ${VALIDATE_LIMITS.lines} lines (with the other files)`);
  }
  const facts: SourceFacts[] = [];
  for (const { name, text } of texts) {
    await new Promise((resolve) => setImmediate(resolve));
    const read = readSource(text);
    facts.push(read);
    for (const load of read.loads) {
      if (load.name.length > VALIDATE_LIMITS.nameLength) {
        throw refuse(name, 'maxNameLength', VALIDATE_LIMITS.nameLength, `loads a ${load.kind} with a name of ${load.name.length} characters (line ${load.line}); names are at most ${VALIDATE_LIMITS.nameLength}`);
      }
      if (++loads > VALIDATE_LIMITS.loads) throw refuse(name, 'maxLoads', VALIDATE_LIMITS.loads, `loads more than ${VALIDATE_LIMITS.loads} classes and packages (with the other files)`);
    }
    for (const use of read.uses) {
      files.add(use.name);
      if (files.size > VALIDATE_LIMITS.fileNames) throw refuse(name, 'maxFileReads', VALIDATE_LIMITS.fileNames, `reads more than ${VALIDATE_LIMITS.fileNames} different files (with the other files)`);
    }
  }
  return facts;
}
