// What a sandbox's processes use, read from the host's /proc: the resident memory and CPU time
// of a process and all its descendants (a paused preamble's bubblewrap, driver and TeX; see
// paused-cache.ts, which bounds them).
import { readdir, readFile } from 'node:fs/promises';

export interface TreeUsage {
  /** Resident bytes, summed over the tree. */
  rssBytes: number;
  /** User and system CPU seconds, summed over the tree. */
  cpuSeconds: number;
  /** Every process of the tree: its pid and command name. */
  processes: Array<{ pid: number; comm: string }>;
}

const PAGE = 4096;
const TICKS = 100;

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  rss: number;
  cpu: number;
}

/** /proc/<pid>/stat: the name is in parentheses and may hold spaces; fields follow its last ')'. */
async function stats(): Promise<Stat[]> {
  const out: Stat[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const close = text.lastIndexOf(')');
    if (close < 0) continue;
    const fields = text.slice(close + 2).split(' ');
    out.push({
      pid: Number(name),
      comm: text.slice(text.indexOf('(') + 1, close),
      ppid: Number(fields[1]),
      cpu: (Number(fields[11]) + Number(fields[12])) / TICKS,
      rss: Number(fields[21]) * PAGE,
    });
  }
  return out;
}

/** Usage of each tree rooted at `roots` (one /proc walk for all). */
export async function treeUsage(roots: number[]): Promise<Map<number, TreeUsage>> {
  const all = await stats();
  const children = new Map<number, Stat[]>();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map(all.map((s) => [s.pid, s]));
  const result = new Map<number, TreeUsage>();
  for (const root of roots) {
    const usage: TreeUsage = { rssBytes: 0, cpuSeconds: 0, processes: [] };
    const queue = byPid.has(root) ? [byPid.get(root)!] : [];
    while (queue.length > 0) {
      const s = queue.pop()!;
      usage.rssBytes += s.rss;
      usage.cpuSeconds += s.cpu;
      usage.processes.push({ pid: s.pid, comm: s.comm });
      queue.push(...(children.get(s.pid) ?? []));
    }
    result.set(root, usage);
  }
  return result;
}
