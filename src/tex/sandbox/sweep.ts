// Job workspaces hold customer source; a service that was killed leaves them behind. Each
// process keeps its workspaces in its own folder under the shared work root, named after its
// pid and the kernel's start time for that pid, so a later start can tell a dead owner's
// folder (remove it) from a live one's (another service, or a parallel test process). A
// process that stops cleanly removes its own folder once its last pool has closed. The work
// root itself must be the service's alone: one another user made, or may write to, could
// hold anything it planted there (a formats folder, a workspace), so it is refused.
import { readFileSync } from 'node:fs';
import { lstat, mkdir, chmod, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { removeWorkspace } from './workspace.js';

const FOLDER = /^p(\d+)-(\d+)$/;

/** The start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export async function startTime(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/** The work root is another user's, or others may write to it: the service does not start. */
export class WorkRootRefused extends Error {
  constructor(root: string, why: string) {
    super(`the work root ${root} ${why}; another user could plant files there. Remove it (or point TMPDIR at a folder of the service's own) and start again`);
    this.name = 'WorkRootRefused';
  }
}

/**
 * Makes `root` (0711: job uids traverse it, none may list it) or checks the one that is
 * there: a directory, not a link, owned by this process's uid, that neither its group nor
 * others may write to. Throws WorkRootRefused otherwise.
 */
export async function claimWorkRoot(root: string): Promise<void> {
  await mkdir(dirname(root), { recursive: true });
  await mkdir(root, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const stats = await lstat(root);
  const uid = process.getuid?.();
  if (!stats.isDirectory()) throw new WorkRootRefused(root, `is ${stats.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}`);
  if (uid !== undefined && stats.uid !== uid) throw new WorkRootRefused(root, `is owned by uid ${stats.uid}, not by this service (uid ${uid})`);
  if ((stats.mode & 0o022) !== 0) throw new WorkRootRefused(root, `may be written by ${stats.mode & 0o002 ? 'any user' : 'its group'} (mode ${(stats.mode & 0o777).toString(8)})`);
  await chmod(root, 0o711);
}

/** The name part that ties a folder outside the work root to this process (the launcher's FIFOs, launcher.ts). */
export function processTag(): string {
  let start = '0';
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '0';
  } catch {
    // no /proc: a tag that no live process has, so a later start removes the folder
  }
  return `p${process.pid}-${start}`;
}

const LAUNCH_FOLDER = /^quire-launch-p(\d+)-(\d+)-/;

/**
 * Removes the sandbox launchers' folders (launcher.ts) of processes that have ended, from
 * `dir` (TMPDIR): a service killed with kill -9 cannot remove its own. Only folders of our own
 * uid: TMPDIR is shared, and anything else there is not ours to judge.
 */
export async function sweepLaunchFolders(dir = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of await readdir(dir).catch(() => [])) {
    const match = LAUNCH_FOLDER.exec(name);
    if (!match || (await startTime(Number(match[1]))) === match[2]) continue;
    const stats = await lstat(join(dir, name)).catch(() => null);
    if (!stats?.isDirectory() || (uid !== undefined && stats.uid !== uid)) continue;
    await removeWorkspace(join(dir, name)).then(
      () => removed.push(name),
      () => {},
    );
  }
  return removed;
}

/** Pools of this process holding each owner folder: the last to leave removes it. */
const holders = new Map<string, number>();

/** This process's folder under `root` (created, traversable by job uids); leave it with leaveOwnerFolder. */
export async function ownerFolder(root: string): Promise<string> {
  const folder = join(root, `p${process.pid}-${(await startTime(process.pid)) ?? '0'}`);
  holders.set(folder, (holders.get(folder) ?? 0) + 1);
  await mkdir(folder, { recursive: true, mode: 0o711 });
  await chmod(folder, 0o711);
  return folder;
}

/**
 * A pool that has ended its last job leaves its folder; the process's last pool to leave
 * removes it with whatever is in it, so a clean stop leaves nothing for the next start to sweep.
 */
export async function leaveOwnerFolder(folder: string): Promise<void> {
  const left = (holders.get(folder) ?? 1) - 1;
  if (left > 0) {
    holders.set(folder, left);
    return;
  }
  holders.delete(folder);
  await removeWorkspace(folder);
}

/** Removes the folders under `root` whose owning process has ended; returns their names. */
export async function sweepWorkRoot(root: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(root).catch(() => [])) {
    const match = FOLDER.exec(name);
    if (!match) continue;
    const alive = (await startTime(Number(match[1]))) === match[2];
    if (alive) continue;
    const stats = await lstat(join(root, name)).catch(() => null);
    if (!stats?.isDirectory()) continue;
    try {
      await removeWorkspace(join(root, name));
      removed.push(name);
    } catch {
      // Another process sweeping the same folder, or a file we may not remove: next start.
    }
  }
  return removed;
}
