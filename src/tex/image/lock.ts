// A lock file that says which process builds an image, so two setups started at once do not
// build the same image twice: the second waits. A lock left by a process that died (killed
// setup, reboot) is taken over.
import { open, readFile, rm } from 'node:fs/promises';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface LockOptions {
  /** Called once when another live process holds the lock. */
  onWait?: (holder: number) => void;
  pollMs?: number;
}

/** Takes the lock at `path` (waiting while a live process holds it); resolves to its release. */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  let told = false;
  for (;;) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) {
      // A dead holder (or a file cut short while being written): take it over. Removing and
      // then creating again keeps `wx` as the only arbiter between two processes doing this.
      await rm(path, { force: true });
      continue;
    }
    if (!told) options.onWait?.(holder);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
  }
}
