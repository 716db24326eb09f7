// How many real documents load each package for a name several packages define (issue 39's
// frequency table): the index knows who defines \ch, this knows that documents load
// chemformula for it. usage-table.ts is built by scripts/package-usage.ts from TeX Live's
// documentation sources.
import { USAGE } from './usage-table.js';

export interface UsageTable {
  /** Where the documents came from (the Debian packages and their version). */
  source: string;
  /** Documents read. */
  documents: number;
  /** `c:name` or `e:name` → package → documents that load the package for the name. */
  names: Record<string, Record<string, number>>;
}

/** A package fewer documents load for a name is noise (one manual that shows it off). */
export const USAGE_MIN_DOCUMENTS = 2;

/** Real documents that load `pkg` for the command or environment `name` (0 when the table has no row). */
export function documentsLoading(pkg: string, name: string, kind: 'command' | 'environment'): number {
  return USAGE.names[`${kind === 'command' ? 'c' : 'e'}:${name}`]?.[pkg] ?? 0;
}
