// A recursive watch of a project folder that sees every save, whatever the editor's way of
// saving. Node 20's recursive fs.watch on Linux follows the files it found by inode: a save that
// writes a temporary file and renames it over the old one (vim, VS Code, JetBrains) is reported
// once, and every later save of that file in a subfolder is missed (measured). A watch on each
// folder reports the folder's entries by name, so a renamed-in file is seen as itself every time.
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * inotify watches are a per-user kernel resource (8,192 by default on older kernels, shared
 * with every editor and tool of the user): a project's folders are far fewer, and past this
 * many the rest is left unwatched and the caller is told once.
 */
export const MAX_FOLDERS = 2048;

export interface TreeWatch {
  close(): void;
}

export interface TreeWatchOptions {
  /** A folder (relative, "/"-separated) whose contents need no watching: dot folders, ignored ones. */
  skipFolder(rel: string): boolean;
  /** Something in `rel` was written, created, removed or renamed. */
  onEvent(rel: string): void;
  /** Called once when MAX_FOLDERS is reached. */
  onFull(): void;
}

export async function watchTree(root: string, options: TreeWatchOptions): Promise<TreeWatch> {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let full = false;

  const drop = (rel: string) => {
    for (const [folder, watcher] of watchers) {
      if (folder === rel || folder.startsWith(`${rel}/`)) {
        watcher.close();
        watchers.delete(folder);
      }
    }
  };

  // A renamed or created entry may be a folder to watch; a watched folder that is gone is dropped.
  const entryChanged = async (rel: string) => {
    const facts = await stat(join(root, rel)).catch(() => null);
    if (closed) return;
    if (facts?.isDirectory()) await add(rel);
    else if (!facts && rel !== '') drop(rel);
  };

  const add = async (rel: string): Promise<void> => {
    if (closed || watchers.has(rel) || (rel !== '' && options.skipFolder(rel))) return;
    if (watchers.size >= MAX_FOLDERS) {
      if (!full) options.onFull();
      full = true;
      return;
    }
    const dir = rel === '' ? root : join(root, rel);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (event, name) => {
        if (!name) return;
        const child = rel === '' ? name.toString() : `${rel}/${name.toString()}`;
        options.onEvent(child);
        if (event === 'rename') void entryChanged(child);
      });
    } catch {
      return; // gone between its listing and its watch
    }
    watcher.on('error', () => drop(rel));
    watchers.set(rel, watcher);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await add(rel === '' ? entry.name : `${rel}/${entry.name}`);
  };

  await add('');
  if (!watchers.has('')) throw new Error('the folder cannot be watched');
  return {
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
