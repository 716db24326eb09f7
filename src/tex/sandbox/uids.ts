// Every uid a sandboxed process runs as, named in one place. Inside bubblewrap every process
// is `nobody`; on the host, when the service is root, each kind of work drops to an
// unprivileged uid of its own, so that RLIMIT_NPROC and the "no process left" checks are per
// job and one kind of work cannot signal or read another's. Without root the service has no
// other uid to give: every process runs as the service (sandboxUid gives none).
//
// The TeX slots' and warm validators' uids come in blocks, one block per process. A block is
// claimed, not derived: it once was the process id modulo 1000, and two live processes whose
// ids agree modulo 1000 (parallel test processes, two services on one host) then ran their
// jobs as the same uids. A claim is a symbolic link `<block>` → `<pid>-<start time>` in a
// folder of root's (CLAIMS), made with symlink(2), which fails when the name exists: of two
// processes that want one block exactly one gets it. A claim whose process has ended (its pid
// is gone, or now names a later process with another start time) is taken over; see takeOver.
import { mkdirSync, lstatSync, readFileSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/** The uid (and gid) every process has inside a bubblewrap sandbox (`--uid`/`--gid`). */
export const INSIDE_UID = 65534;
/** One-off tools over PDFs this service wrote (pdftotext, the qpdf merge, the Preflight sample): nobody on the host too. */
export const NOBODY_UID = 65534;
/** chktex on a source (next to the SVG converter's). */
export const CHKTEX_UID = 199_998;
/** SVG and PostScript conversions of assets (below the TeX slots' ids). */
export const CONVERTER_UID = 199_999;

/** Each TeX slot runs as its own unprivileged uid, so RLIMIT_NPROC is per TeX job: its process's block, from here. */
export const SLOT_UID_BASE = 200_000;
/** Most slots a process has (QUIRE_COMPILE_CONCURRENCY's ceiling). */
export const MAX_SLOTS = 256;
/** Uids a process's warm PDF/A validators may run as (tex/output/warm-validator.ts); at most this many alive at once. */
export const VALIDATOR_UIDS = 64;
/** Blocks of uids: processes that may run jobs as root on one host at once. */
export const UID_BLOCKS = 1000;
/** Where the blocks' claims live: root's, on a tmpfs that a reboot empties, and the same for every process of the host. */
export const CLAIMS = '/run/quire/uid-blocks';

/** A process as a claim names it: its pid and the kernel's start time of that pid (which a reused pid does not share). */
export interface Claimant {
  pid: number;
  start: string;
}

/** The start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or null when there is no such process. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const name = (claimant: Claimant): string => `${claimant.pid}-${claimant.start}`;

/** Whether the claim text `owner` (`<pid>-<start>`) names a live process. */
function alive(owner: string): boolean {
  const match = /^(\d+)-(\d+)$/.exec(owner);
  return match !== null && startTime(Number(match[1])) === match[2];
}

/** The owner the claim `path` names, or null when there is none. */
function ownerOf(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** Makes the claim `path` → `me`; false when the name is taken. */
function link(me: string, path: string): boolean {
  try {
    symlinkSync(me, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Takes over the claim `path` of the ended process `dead` for `me`. Removing it and linking
 * anew is two steps, and two processes that both saw it dead must not both do them (the second
 * would remove the first's fresh claim): only the one that makes `<path>.takeover-<dead>` goes
 * on, and it first reads again that the claim still names `dead` (a claimant's pid and start
 * time never recur, so the marker is never wanted after). A process killed between marker and
 * link leaves that block unused until the folder is emptied (a reboot): there are UID_BLOCKS.
 */
function takeOver(path: string, dead: string, me: string): boolean {
  const marker = `${path}.takeover-${dead}`;
  if (!link(me, marker)) return false;
  try {
    if (ownerOf(path) !== dead) return false;
    unlinkSync(path);
    return link(me, path);
  } finally {
    unlinkSync(marker);
  }
}

/**
 * Claims a block of uids in `dir` for `claimant` (this process by default), starting the
 * search at `first`; returns its number. Throws when every block is held by a live process.
 */
export function claimUidBlock(dir: string, claimant: Claimant = self(), first = claimant.pid % UID_BLOCKS): number {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = lstatSync(dir);
  const uid = process.getuid?.();
  // Anyone else who may write here could hold every block, or free a block a live process holds.
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o022) !== 0) {
    throw new Error(`the uid claims folder ${dir} is not this service's alone (a directory of uid ${uid}, written by none other)`);
  }
  const me = name(claimant);
  for (let i = 0; i < UID_BLOCKS; i++) {
    const block = (first + i) % UID_BLOCKS;
    const path = join(dir, String(block));
    if (link(me, path)) return block;
    const owner = ownerOf(path);
    // Our own (a claim made before): ours still. A claim gone meanwhile: the next round sees the name free.
    if (owner === me) return block;
    if (owner !== null && !alive(owner) && takeOver(path, owner, me)) return block;
  }
  throw new Error(`all ${UID_BLOCKS} uid blocks in ${dir} are held by live processes`);
}

/** Gives up the claim of `block` in `dir` if it is still `claimant`'s. */
export function releaseUidBlock(dir: string, block: number, claimant: Claimant = self()): void {
  const path = join(dir, String(block));
  if (ownerOf(path) === name(claimant)) unlinkSync(path);
}

function self(): Claimant {
  return { pid: process.pid, start: startTime(process.pid) ?? '0' };
}

let claimed: number | undefined;

/**
 * This process's block, claimed at the first call (as root; released when the process exits,
 * and taken over by a later claim if it dies without). Without root no uid is ever given
 * (sandboxUid), so nothing is claimed: the block only numbers ids that stay unused.
 */
export function uidBlock(): number {
  if (claimed !== undefined) return claimed;
  if (process.getuid?.() !== 0) return (claimed = process.pid % UID_BLOCKS);
  const block = claimUidBlock(CLAIMS);
  const me = self();
  process.once('exit', () => releaseUidBlock(CLAIMS, block, me));
  return (claimed = block);
}

/** The uid of TeX slot `slot` (0 ≤ slot < MAX_SLOTS) of block `block` (this process's by default). */
export const slotUid = (slot: number, block = uidBlock()): number => SLOT_UID_BASE + block * MAX_SLOTS + slot;
/** The uid of warm validator `n` (0 ≤ n < VALIDATOR_UIDS) of block `block` (this process's by default), above every slot's. */
export const validatorUid = (n: number, block = uidBlock()): number => SLOT_UID_BASE + UID_BLOCKS * MAX_SLOTS + block * VALIDATOR_UIDS + n;

/**
 * The uid a sandboxed process runs as: `uid` when the service is root (it drops to that
 * unprivileged id), none otherwise (the service has no other id to give).
 */
export function sandboxUid(uid: number): number | undefined {
  return process.getuid?.() === 0 ? uid : undefined;
}
