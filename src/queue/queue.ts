// The TeX queue as every caller sees it. Its unit is a *TeX job* (one document through the
// sandboxed engine, or one PDF merge through qpdf), not an async API job (src/jobs/). Two
// implementations: the local pool of sandboxed slots (local-pool.ts) and BullMQ in front of
// `quire worker` processes (bullmq.ts); domain.ts turns their errors into catalogue errors.
import type { TexJob, TexResult } from '../tex/job.js';

/** PDFs this service wrote, joined in order into one (a batch render's `merge`). */
export interface MergeJob {
  pdfs: Buffer[];
  /** Largest merged PDF qpdf may write. */
  maxBytes: number;
}

export interface MergeResult {
  pdf: Buffer;
  pages: number;
}

export interface TexQueue {
  run(job: TexJob): Promise<TexResult>;
  /** Merges PDFs in the sandbox, where TeX jobs run (on a worker in BullMQ mode). */
  merge(job: MergeJob): Promise<MergeResult>;
  stats(): { running: number; waiting: number };
  /** Throws when the queue cannot take work (its broker is unreachable); absent for the local pool. */
  ping?(): Promise<void>;
  /** Stops accepting work and ends idle sandboxes. */
  close(): Promise<void>;
  /** Before serving: removes workspaces left by services that died; resolves to what went. */
  start?(): Promise<string[]>;
}
