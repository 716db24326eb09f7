// The rules in the order they are tried: the first that recognises the error answers.
import { missingFile } from './files.js';
import { engineRequirement, fontNotFound } from './engines.js';
import { encoding, inputEncoding, unicodeCharacter } from './encodings.js';
import { renewUndefined, undefinedCommand } from './commands.js';
import { mismatchedEnvironment, undefinedEnvironment } from './environments.js';
import { absentBeginDocument, missingBeginDocument } from './document.js';
import { missingMath } from './math.js';
import { runaway, unbalanced } from './braces.js';
import { other } from './other.js';
import { shellEscape } from './shell.js';
import type { Rule } from './finding.js';

export { RESTRICTED_PROGRAMS, shellRefusals, unexplainedRefusal, type ShellRefusals } from './shell.js';
export { verdictKey, type Finding, type RuleContext, type Verdicts, type Verification } from './finding.js';

/** Rules that hold wherever TeX was when it failed, even inside a package or class file. */
export const RULES_ANYWHERE: readonly Rule[] = [shellEscape, missingFile, engineRequirement, fontNotFound, unicodeCharacter];

/**
 * Rules for an error inside the bibliography bibtex or biber generated (main.bbl): a command
 * its style writes (\\url, \\doi after \\urlprefix, jurabib's \\jbdoitem) needs the package
 * that defines it, like one written in main.tex.
 */
export const RULES_IN_BIBLIOGRAPHY: readonly Rule[] = [...RULES_ANYWHERE, undefinedCommand, undefinedEnvironment];

export const RULES: readonly Rule[] = [
  shellEscape,
  missingFile,
  engineRequirement,
  fontNotFound,
  unicodeCharacter,
  absentBeginDocument,
  inputEncoding,
  encoding,
  undefinedCommand,
  renewUndefined,
  undefinedEnvironment,
  mismatchedEnvironment,
  missingBeginDocument,
  runaway,
  missingMath,
  unbalanced,
  other,
];
