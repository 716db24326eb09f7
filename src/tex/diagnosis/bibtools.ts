// A bibliography database the document names but the request did not send. biber says
// "ERROR - Cannot find 'x.bib'!", bibtex "I couldn't open database file x.bib". The runner
// delivers such a document with a missing_file warning (warnings.ts) when TeX writes its PDF;
// a transcript that still carries "<tool> failed:" with that output is missing_asset.
import type { Finding } from './rules/finding.js';
import type { Source } from './source.js';

/** The commands that name a database, with their argument as group 1. */
const DATABASES = /\\(?:addbibresource|bibliography|addglobalbib|addsectionbib)(?:\[[^\]]*\])?\{([^}]*)/g;
const FAILED = /\n(biber|bibtex) failed:\n([\s\S]*)$/;

export function missingDatabase(log: string, source?: Source): Finding | undefined {
  const failed = FAILED.exec(log);
  if (!failed) return undefined;
  const [, tool, output] = failed;
  const file = (/ERROR - Cannot find '([^']+)'/.exec(output!) ?? /I couldn't open database file (\S+)/.exec(output!))?.[1];
  if (!file) return undefined;
  const name = file.endsWith('.bib') ? file : `${file}.bib`;
  const line = source ? databaseLine(source, name) : undefined;
  const where = line === undefined ? '' : ` (line ${line})`;
  return {
    error_class: 'missing_asset',
    summary: `${tool} cannot find the bibliography database "${name}"${where}: it was not sent with the compile request.`,
    suggested_fix: `Send "${name}" in "files" (file name → the .bib text), or fix the name in \\${tool === 'biber' ? 'addbibresource' : 'bibliography'}${where}.`,
    symbol: name,
    ...(line !== undefined ? { line } : {}),
    hint: `Add "${name}" to "files" in the request (its text as the value) and compile again.`,
  };
}

/** The line of main.tex that names the database `name` (refs.bib) in \bibliography or \addbibresource. */
export function databaseLine(source: Source, name: string): number | undefined {
  return source.findArgument(DATABASES, name.replace(/\.bib$/, ''), false);
}
