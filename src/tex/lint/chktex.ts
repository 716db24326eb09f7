// chktex (Debian's chktex) over one source, inside the same bubblewrap sandbox TeX runs in:
// the free style and syntax warnings of POST /api/v1/validate, each with its line and column.
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessLimits } from '../sandbox/sandbox.js';
import { runSandboxed } from '../sandbox/sandboxed.js';
import { CHKTEX_UID, sandboxUid } from '../sandbox/uids.js';
import { defaultImageRoot } from '../image/default.js';

export interface ChktexWarning {
  line: number;
  column: number;
  /** chktex's warning number (chktex -h lists them). */
  number: number;
  message: string;
}

/** Wall clock of one run; chktex reads a 1 MB source in well under a second. */
export const CHKTEX_TIMEOUT_MS = 10_000;
/** Warnings reported at most; a long source with many is cut here. */
export const CHKTEX_MAX_WARNINGS = 200;
const MAX_OUTPUT_BYTES = 1024 * 1024;
const LIMITS: ProcessLimits = { cpuSeconds: 10, fileBytes: 1024 * 1024, memoryBytes: 512 * 1024 * 1024, processes: 16 };

// One warning per line; the message last, so a colon in it is kept. -I0: \input files are
// not followed (they are not in the sandbox); -q: no banner; -f sets the format itself (no
// -v: its numbered formats live in the global chktexrc, which forky's chktex no longer ships;
// without one chktex runs on its built-in rules and says so on stderr).
const FORMAT = '%l:%c:%n:%m\n';

export function parseChktex(output: string): ChktexWarning[] {
  const warnings: ChktexWarning[] = [];
  for (const line of output.split('\n')) {
    const m = /^(\d+):(\d+):(\d+):(.*)$/.exec(line);
    if (!m) continue;
    warnings.push({ line: Number(m[1]), column: Number(m[2]), number: Number(m[3]), message: (m[4] ?? '').trim() });
    if (warnings.length >= CHKTEX_MAX_WARNINGS) break;
  }
  return warnings;
}

/**
 * chktex runs at once in this process; more wait their turn. Starting a sandbox blocks the
 * event loop while the service forks (about 20 ms on a 2-core machine): twenty validate calls
 * arriving together would otherwise hold every other request for 400 ms.
 */
export const CHKTEX_CONCURRENCY = 2;
let running = 0;
const waiting: Array<() => void> = [];

async function turn<T>(run: () => Promise<T>): Promise<T> {
  if (running >= CHKTEX_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await run();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** Runs chktex on `source` (CHKTEX_CONCURRENCY at once); rejects when it cannot run (not installed, killed at the timeout). */
export function runChktex(source: string, options: { isolate: boolean; timeoutMs?: number }): Promise<ChktexWarning[]> {
  return turn(() => chktex(source, options));
}

async function chktex(source: string, options: { isolate: boolean; timeoutMs?: number }): Promise<ChktexWarning[]> {
  const workspace = await mkdtemp(join(tmpdir(), 'quire-chktex-'));
  const uid = sandboxUid(CHKTEX_UID);
  const timeoutMs = options.timeoutMs ?? CHKTEX_TIMEOUT_MS;
  try {
    if (uid !== undefined) await chown(workspace, uid, uid);
    const spec = { workspace, env: {}, limits: LIMITS, isolate: options.isolate, uid, root: defaultImageRoot() };
    const result = await runSandboxed(spec, ['chktex', '-q', '-I0', '-f', FORMAT], { stdin: source, timeoutMs, maxOutput: MAX_OUTPUT_BYTES });
    if (result.killed === 'timeout') throw new Error(`chktex took longer than ${timeoutMs / 1000} s`);
    // chktex exits 0 (nothing found), 2 (warnings) or 3 (errors); 1 is a failure to run. Output
    // past the cap is cut: the warnings read so far are kept.
    if (result.code === 1 || (result.code === null && result.killed !== 'output')) throw new Error(`chktex could not run: ${result.stderr.slice(0, 200)}`);
    return parseChktex(result.stdout.toString('utf8'));
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}
