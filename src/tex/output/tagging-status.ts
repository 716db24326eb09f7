// Which packages of a document block tagging (issue 40), from the LaTeX kernel's own
// tagging-status data (latex-tagging-status.ltx in the image: one
// \@kernel@tagging@status{name}{ext}{code} per package or class, 1 "no-support" and 2
// "currently-incompatible" block tagging, 3 "partially-compatible") and the files the
// transcript shows TeX opening. Read from the transcript, so it also names them when TeX failed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultImageRoot } from '../image/default.js';
import type { TexWarning } from '../warnings.js';

const STATUS_FILE = 'usr/share/texlive/texmf-dist/tex/latex/latex-tagging-status/latex-tagging-status.ltx';
const BLOCKING: Record<number, string> = { 1: 'not supported by the tagging code', 2: 'currently incompatible with tagging' };
const MAX_BLOCKERS = 20;

export interface TaggingBlocker {
  /** e.g. listings.sty */
  file: string;
  status: string;
}

let cached: { root: string | undefined; table: Map<string, number> | null } | undefined;

/** The kernel's table of the current image (empty when the image has none: an older TeX Live). */
function statusTable(): Map<string, number> {
  const root = defaultImageRoot();
  if (cached && cached.root === root && cached.table) return cached.table;
  let table = new Map<string, number>();
  try {
    table = parseStatus(readFileSync(join(root ?? '/', STATUS_FILE), 'latin1'));
  } catch {
    // No status data in this image: nothing is named.
  }
  cached = { root, table };
  return table;
}

/** Parses the status data `text` (tests) into the table used by taggingBlockers. */
export function parseStatus(text: string): Map<string, number> {
  const table = new Map<string, number>();
  for (const m of text.matchAll(/^\\@kernel@tagging@status\{([^}]+)\}\{([^}]+)\}\{(\d+)\}/gm)) table.set(`${m[1]}.${m[2]}`, Number(m[3]));
  return table;
}

/**
 * The blocking packages and classes among the files the transcript shows TeX opening
 * ("(/…/listings.sty"); TeX wraps its transcript at 79 characters, so wrapped lines are joined first.
 */
export function taggingBlockers(log: string, table: Map<string, number> = statusTable()): TaggingBlocker[] {
  const unwrapped = log.replace(/^(.{79})\n/gm, '$1');
  const seen = new Set<string>();
  const blockers: TaggingBlocker[] = [];
  for (const m of unwrapped.matchAll(/\((?:[^()\s]*\/)?([A-Za-z0-9_.-]+\.(?:sty|cls))\b/g)) {
    const file = m[1]!;
    if (seen.has(file)) continue;
    seen.add(file);
    const status = BLOCKING[table.get(file) ?? 0];
    if (status && blockers.length < MAX_BLOCKERS) blockers.push({ file, status });
  }
  return blockers;
}

/** One warning per blocking package of a tagged compile (the PDF was delivered; its report says what the checks found). */
export function taggingWarnings(log: string): TexWarning[] {
  return taggingBlockers(log).map(({ file, status }) => ({
    type: 'tagging_blocked' as const,
    message: `${file} is ${status} (LaTeX tagging-status): the structure it makes may be missing or wrong in the tagged PDF.`,
    symbol: file,
    fix: `Replace ${file.replace(/\.(sty|cls)$/, '')} with a compatible alternative (https://latex3.github.io/tagging-project/tagging-status), or check the conformance report.`,
  }));
}

/** A sentence for the diagnosis of a tagged compile that failed, naming the blocking packages; null without any. */
export function taggingFailureHint(log: string): string | null {
  const blockers = taggingBlockers(log);
  if (blockers.length === 0) return null;
  return `Tagging is on and these packages block it (LaTeX tagging-status): ${blockers.map((b) => `${b.file} (${b.status})`).join(', ')}. Remove or replace them, or compile without output.tagged and PDF/UA.`;
}
