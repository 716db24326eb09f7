// How many real documents load each package for a name several packages define (issue 39's
// frequency table): the index knows who defines \ch, this knows that documents load
// chemformula for it. The table (diagnosis/package-usage.json, about 2,000 names) is built by
// scripts/package-usage.ts from TeX Live's documentation sources and read once, on first use.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../project-root.js';

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

export const USAGE_FILE = join(projectRoot(), 'diagnosis', 'package-usage.json');

let table: UsageTable | undefined;

/** The table, read on first use: a checkout without it ranks by the index alone. */
export function usageTable(): UsageTable {
  if (!table) {
    try {
      table = JSON.parse(readFileSync(USAGE_FILE, 'utf8')) as UsageTable;
    } catch {
      table = { source: 'none', documents: 0, names: {} };
    }
  }
  return table;
}

/** Real documents that load `pkg` for the command or environment `name` (0 when the table has no row). */
export function documentsLoading(pkg: string, name: string, kind: 'command' | 'environment'): number {
  return usageTable().names[`${kind === 'command' ? 'c' : 'e'}:${name}`]?.[pkg] ?? 0;
}
