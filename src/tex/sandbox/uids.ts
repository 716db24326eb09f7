// Every uid a sandboxed process runs as, named in one place. Inside bubblewrap every process
// is `nobody`; on the host, when the service is root, each kind of work drops to an
// unprivileged uid of its own, so that RLIMIT_NPROC and the "no process left" checks are per
// job and one kind of work cannot signal or read another's. Without root the service has no
// other uid to give: every process runs as the service (sandboxUid gives none).

/** The uid (and gid) every process has inside a bubblewrap sandbox (`--uid`/`--gid`). */
export const INSIDE_UID = 65534;
/** One-off tools over PDFs this service wrote (pdftotext, the qpdf merge, the Preflight sample): nobody on the host too. */
export const NOBODY_UID = 65534;
/** chktex on a source (next to the SVG converter's). */
export const CHKTEX_UID = 199_998;
/** SVG and PostScript conversions of assets (below the TeX slots' ids). */
export const CONVERTER_UID = 199_999;

/**
 * Each TeX slot runs as its own unprivileged uid, so RLIMIT_NPROC is per TeX job. The range is
 * offset by the process id so that two services on one host (or parallel test processes) do
 * not share uids.
 */
export const SLOT_UID_BASE = 200_000;
/** Most slots a process has (QUIRE_COMPILE_CONCURRENCY's ceiling). */
export const MAX_SLOTS = 256;
/** Uids a process's warm PDF/A validators may run as (tex/output/warm-validator.ts); at most this many alive at once. */
export const VALIDATOR_UIDS = 64;

/** The uid of this process's TeX slot `slot` (0 ≤ slot < MAX_SLOTS). */
export const slotUid = (slot: number): number => SLOT_UID_BASE + (process.pid % 1000) * MAX_SLOTS + slot;
/** The uid of this process's warm validator `n` (0 ≤ n < VALIDATOR_UIDS), above every slot's. */
export const validatorUid = (n: number): number => SLOT_UID_BASE + 1000 * MAX_SLOTS + (process.pid % 1000) * VALIDATOR_UIDS + n;

/**
 * The uid a sandboxed process runs as: `uid` when the service is root (it drops to that
 * unprivileged id), none otherwise (the service has no other id to give).
 */
export function sandboxUid(uid: number): number | undefined {
  return process.getuid?.() === 0 ? uid : undefined;
}
