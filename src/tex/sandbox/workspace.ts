// The only way the host touches a job's workspace. Everything below the workspace directory
// was written by hostile code (lualatex can make links, FIFOs, directories and renames), and
// the host reads it with more rights than the job: so no path is followed through a symbolic
// link, a file is accepted only when the opened descriptor is a regular file the job's uid
// owns with a single link, reads stop at a fixed cap, and walks are bounded in depth and size.
import { constants } from 'node:fs';
import { lstat, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_DIRECTORY;

/** The job's name in its workspace: main.tex, main.log, main.pdf. */
export const MAIN = 'main';

/** Deepest directory a walk enters, and most entries it looks at. */
export const WALK_DEPTH = 8;
export const WALK_ENTRIES = 10_000;
/** Transcript kept: its head (the preamble's warnings) and its tail (where the error is). */
export const LOG_HEAD_BYTES = 512 * 1024;
export const LOG_TAIL_BYTES = 3 * 1024 * 1024;

/** An output of the job is not what a TeX run leaves (a link, a FIFO, a hard link, …). */
export class WorkspaceViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceViolation';
  }
}

/** A path relative to the workspace, as the job named it (from the log or the .fls). */
export function plainRelative(name: string): string[] | null {
  if (!name || name.includes('\0') || name.startsWith('/')) return null;
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.length > WALK_DEPTH || parts.some((part) => part === '..')) return null;
  return parts;
}

function describe(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** The workspace of one job, read as the job's `uid` would be trusted to have written it. */
export class Workspace {
  constructor(
    readonly dir: string,
    /** Owner every output must have: the slot uid, or our own uid when unprivileged. */
    readonly uid: number,
  ) {}

  /** Opens `name` (relative, no `..`) without following any link; null when it does not exist. */
  private async openFile(name: string): Promise<FileHandle | null> {
    const parts = plainRelative(name);
    if (!parts) throw new WorkspaceViolation(`${JSON.stringify(name.slice(0, 200))} is not a path inside the workspace`);
    // Each directory is opened on the descriptor of its parent (/proc/self/fd/N is the open
    // directory itself, not a path), so no component can be swapped for a link mid-way.
    let parent: FileHandle | null = null;
    try {
      let base = this.dir;
      for (const [i, part] of parts.entries()) {
        const last = i === parts.length - 1;
        let handle: FileHandle;
        try {
          handle = await open(`${base}/${part}`, last ? FILE_FLAGS : DIR_FLAGS);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return null;
          if (code === 'ELOOP') throw new WorkspaceViolation(`${name} is a symbolic link or passes through one`);
          if (code === 'ENOTDIR') throw new WorkspaceViolation(`${name} passes through a link or a file where a directory belongs`);
          if (code === 'ENXIO') throw new WorkspaceViolation(`${name} is a socket`);
          throw new WorkspaceViolation(`${name} cannot be opened (${code ?? 'error'})`);
        }
        await parent?.close();
        parent = handle;
        base = `/proc/self/fd/${handle.fd}`;
      }
      const file = parent!;
      parent = null;
      return file;
    } finally {
      await parent?.close();
    }
  }

  /** Checks the opened descriptor: a regular file of the job's uid with one link. */
  private async check(name: string, handle: FileHandle): Promise<Stats> {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new WorkspaceViolation(`${name} is ${describe(stats)}, not a regular file`);
    if (stats.uid !== this.uid) throw new WorkspaceViolation(`${name} is owned by another user (uid ${stats.uid})`);
    if (stats.nlink !== 1) throw new WorkspaceViolation(`${name} is a hard link (${stats.nlink} names for one file)`);
    return stats;
  }

  /**
   * The content of `name`, at most `cap` bytes. Null when missing; `over` when the file is
   * larger than the cap (nothing past the cap is read).
   */
  async read(name: string, cap: number): Promise<Buffer | null | 'over'> {
    const handle = await this.openFile(name);
    if (!handle) return null;
    try {
      const stats = await this.check(name, handle);
      if (stats.size > cap) return 'over';
      return await readAt(handle, 0, stats.size);
    } finally {
      await handle.close();
    }
  }

  /** Like read, for files whose only limit is the cap: over it is a violation. */
  async readCapped(name: string, cap: number): Promise<Buffer | null> {
    const data = await this.read(name, cap);
    if (data === 'over') throw new WorkspaceViolation(`${name} is larger than the ${cap} bytes the service reads back`);
    return data;
  }

  /**
   * TeX's transcript, capped while it is read: past the cap only its head and its tail are
   * read, with a marker where the middle was left out.
   */
  async readLog(name: string): Promise<string | null> {
    const handle = await this.openFile(name);
    if (!handle) return null;
    try {
      const { size } = await this.check(name, handle);
      if (size <= LOG_HEAD_BYTES + LOG_TAIL_BYTES) {
        return (await readAt(handle, 0, size)).toString('utf8');
      }
      const head = await readAt(handle, 0, LOG_HEAD_BYTES);
      const tail = await readAt(handle, size - LOG_TAIL_BYTES, LOG_TAIL_BYTES);
      const left = size - head.length - tail.length;
      return `${head.toString('utf8')}\n[log truncated: ${left} bytes left out]\n${tail.toString('utf8')}`;
    } finally {
      await handle.close();
    }
  }

  /** Size of an output of the job, checked like a read; null when it does not exist. */
  async size(name: string): Promise<number | null> {
    const handle = await this.openFile(name);
    if (!handle) return null;
    try {
      return (await this.check(name, handle)).size;
    } finally {
      await handle.close();
    }
  }

  /**
   * Every regular file below the workspace with its size, without following links, at most
   * WALK_DEPTH deep; `overflow` when there were more than WALK_ENTRIES entries.
   */
  async files(): Promise<{ files: Array<{ name: string; size: number }>; overflow: boolean }> {
    const files: Array<{ name: string; size: number }> = [];
    let seen = 0;
    let overflow = false;
    const walk = async (path: string, prefix: string, depth: number): Promise<void> => {
      // Dirent types come from the directory itself: a link is a link, never its target.
      const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
      seen += entries.length;
      if (seen > WALK_ENTRIES) {
        overflow = true;
        return;
      }
      const regular = entries.filter((entry) => entry.isFile());
      const sizes = await Promise.all(regular.map((entry) => lstat(`${path}/${entry.name}`).catch(() => null)));
      sizes.forEach((stats, i) => stats?.isFile() && files.push({ name: prefix + regular[i]!.name, size: stats.size }));
      if (depth >= WALK_DEPTH) return;
      for (const entry of entries.filter((e) => e.isDirectory())) {
        const handle = await open(`${path}/${entry.name}`, DIR_FLAGS).catch(() => null);
        if (!handle) continue;
        try {
          await walk(`/proc/self/fd/${handle.fd}`, `${prefix}${entry.name}/`, depth + 1);
        } finally {
          await handle.close();
        }
        if (overflow) return;
      }
    };
    await walk(this.dir, '', 1);
    return { files, overflow };
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/**
 * Deletes a workspace and everything in it without following a link out of it: the tree
 * is removed entry by entry from lstat, so a link is unlinked, never entered.
 */
export async function removeWorkspace(dir: string): Promise<void> {
  const stats = await lstat(dir).catch(() => null);
  if (!stats) return;
  if (!stats.isDirectory()) throw new Error(`workspace ${dir} is not a directory`);
  await rm(dir, { recursive: true, force: true, maxRetries: 2 });
}
