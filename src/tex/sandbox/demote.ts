// Long jobs yield the CPU to short ones. A job still running after a second (a one-pager takes
// a tenth of that) has its sandbox's processes set to the lowest CPU priority: a looping or
// heavy document then gets the cores only when no ordinary job wants them, so one caller's
// slow documents cannot slow everyone else's (the scheduler stays work-conserving: an idle
// machine still gives a demoted job every free cycle).
//
// Each sandbox is its own session (bubblewrap --new-session), and with the kernel's autogroup
// scheduling (Debian's default) CPU is shared between sessions first, whatever the processes'
// nice values: a session is demoted through /proc/<pid>/autogroup, its processes with
// setpriority (which also covers kernels without autogroup, and is inherited by later passes
// the sandbox's driver starts).
import { readFile, writeFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { treeUsage } from './proctree.js';

/** The nice value of a demoted job: the lowest priority. */
export const DEMOTED_NICE = 19;

/**
 * Lowers the priority of every process under `root` (the sandbox's outer bubblewrap) except
 * those in this service's own session. Best effort: a process that just ended is skipped.
 * Resolves to the number of processes demoted.
 */
export async function demoteTree(root: number): Promise<number> {
  const own = await autogroupOf('self');
  const tree = (await treeUsage([root])).get(root);
  let demoted = 0;
  const groups = new Set<string>();
  for (const { pid } of tree?.processes ?? []) {
    const group = await autogroupOf(String(pid));
    // The outer bubblewrap shares this service's session (its autogroup is ours).
    if (pid === root || (own !== null && group === own)) continue;
    try {
      setPriority(pid, DEMOTED_NICE);
      demoted++;
    } catch {
      continue;
    }
    if (group === null || groups.has(group)) continue;
    groups.add(group);
    await writeFile(`/proc/${pid}/autogroup`, String(DEMOTED_NICE)).catch(() => {});
  }
  return demoted;
}

/** The autogroup a process schedules in ("/autogroup-N"), or null when it is gone or there is none. */
async function autogroupOf(pid: string): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => null);
  return text?.split(' ')[0] ?? null;
}

/**
 * Demotes the sandbox under `pid()` once the job has run `afterMs`; returns the cancel for a
 * job that ended first. `afterMs` 0 turns demotion off.
 */
export function demoteLater(pid: () => number | undefined, afterMs: number): () => void {
  if (afterMs <= 0) return () => {};
  const timer = setTimeout(() => {
    const root = pid();
    if (root !== undefined) void demoteTree(root).catch(() => {});
  }, afterMs);
  timer.unref();
  return () => clearTimeout(timer);
}
