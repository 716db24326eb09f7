// The contract between API nodes and `quire worker` processes when QUIRE_QUEUE=bullmq: the
// queue, the payload of its two kinds of TeX job (a compile, a PDF merge), where inputs and
// outputs live in the shared blob store, and the timings that decide how fast a dead worker's
// TeX job is taken over.
//
// Inputs travel by reference: the source rides in the job (deleted from Redis when the job
// ends), every file by its sha256 in the blob store. The worker writes the PDF and a result
// record (outcome, pages, log) to the blob store; the API node reads them, deletes them and
// the job's inputs, and only then charges quota. Nothing of the source outlives the job.
import { createHash } from 'node:crypto';
import type { Compiler } from '../tex/compilers.js';
import type { PreambleScope, TexResult } from '../tex/job.js';
import type { OutputSpec } from '../tex/output/spec.js';

export const QUEUE_NAME = 'compile';
/** BullMQ job names: the worker tells the two payloads apart by them. */
export const COMPILE = 'compile';
export const MERGE = 'merge';

/** BullMQ's key prefix under the installation's Redis prefix (`quire:` → `quire:bull:compile:…`). */
export const bullPrefix = (redisPrefix: string) => `${redisPrefix}bull`;

/**
 * A dead worker's lock expires after LOCK_MS; a live one renews it every LOCK_MS / 2 (TeX runs
 * in child processes, so the worker's event loop is free to). Every worker checks for expired
 * locks each STALLED_CHECK_MS and puts such jobs back in the queue: a SIGKILLed worker's job
 * is running elsewhere within LOCK_MS + 2 × STALLED_CHECK_MS (BullMQ's defaults, 30 s and
 * 30 s, took 89 s).
 */
export const LOCK_MS = 4_000;
export const STALLED_CHECK_MS = 2_000;
/** Times a job may lose its worker before it fails for good (the caller then gets a retryable 503). */
export const MAX_STALLED = 2;
/** Runs of a job whose worker threw (blob store or sandbox trouble), not counting stalls. */
export const ATTEMPTS = 2;

/** How long a job may wait for a free worker before its caller gets 503 server_busy. */
export const QUEUE_WAIT_MS = 30_000;
/** Time for inputs and outputs to cross the blob store on top of the TeX run. */
export const TRANSFER_MS = 5_000;
/** A merge's two qpdf runs (tex/pdf/merge.ts gives each up to 60 s). */
export const MERGE_MS = 120_000;

export interface RemoteFile {
  /** File name in the job's workspace. */
  name: string;
  /** Blob key of the bytes: a stored asset's own key, or one under the job's prefix. */
  key: string;
  sha256: string;
}

export interface RemoteJobData {
  source: string;
  compiler: Compiler;
  files: RemoteFile[];
  /** The plan's compile timeout; the worker enforces it. */
  timeoutMs: number;
  /** CPU seconds per pass, when the job sets its own (diagnosis probes). */
  cpuSeconds?: number;
  maxFileBytes: number;
  keepPages?: number;
  /** TeX passes at most (diagnosis probes). */
  maxPasses?: number;
  /** TeX goes on past errors (TexJob.continueOnError). */
  continueOnError?: true;
  /** The preamble cache's scope and day (the worker's own cache; see tex/caches/preamble.ts). */
  preamble?: PreambleScope;
  /** The job yields the CPU once it runs long (see JobFairness). */
  yields?: true;
  /** With an output step (issue 23): it is a blob at outputKey(prefix), never in Redis (it may hold passwords). */
  output?: true;
  /** Epoch ms when the API node stops waiting: a worker does not start the job, nor keep its output, after it. */
  deadline: number;
  /** Blob key prefix of everything this job writes. */
  prefix: string;
}

/** A batch's merge: its PDFs, in order, under the job's prefix. */
export interface RemoteMergeData {
  files: RemoteFile[];
  maxBytes: number;
  deadline: number;
  prefix: string;
}

/** What the worker leaves at `resultKey(prefix)`; the PDF, when there is one, is at `pdfKey(prefix)`. */
export type StoredResult =
  /** The runner's result as it is, less the PDF and the page images' bytes (stored beside it). */
  | ({ kind: 'ran' } & Omit<TexResult, 'pdf' | 'pageImages'> & { pageImages?: Array<{ page: number; width: number; height: number }> })
  /** A file's bytes were not in the blob store (a stored asset deleted meanwhile). */
  | { kind: 'input_missing'; names: string[] }
  /** The runner refused the input (a ServiceError), which the API node raises as is. */
  | { kind: 'refused'; code: string; message: string; details: Record<string, unknown> }
  /** A merge's result: the merged PDF is at `pdfKey(prefix)`. */
  | { kind: 'merged'; pages: number }
  /** qpdf could not merge the PDFs (the batch answers merge_error). */
  | { kind: 'merge_failed' };

/** The job's return value in Redis: never any of the document, only where the result is. */
export interface RemoteJobReturn {
  stored: boolean;
}

// Flat names (no folder per job), so a local blob store keeps no empty directories behind.
export const jobPrefix = (jobId: string) => `jobs/${jobId}`;
export const inputKey = (prefix: string, sha256: string) => `${prefix}-in-${sha256}`;
export const pdfKey = (prefix: string) => `${prefix}-out.pdf`;
export const resultKey = (prefix: string) => `${prefix}-result.json`;
export const outputKey = (prefix: string) => `${prefix}-output.json`;
export const pageImageKey = (prefix: string, page: number) => `${prefix}-page-${page}.png`;

/** The output step as JSON for the blob store (attachment and stamp bytes in base64), and back. */
export function encodeOutput(output: OutputSpec): Buffer {
  return Buffer.from(JSON.stringify(output, (_key, value: unknown) => (isBufferJson(value) ? Buffer.from(value.data).toString('base64') : value)));
}
export function decodeOutput(bytes: Buffer): OutputSpec {
  const output = JSON.parse(bytes.toString('utf8')) as OutputSpec & { attachments?: Array<{ data: unknown }>; stamp?: { pdf: unknown } };
  for (const attachment of output.attachments ?? []) attachment.data = Buffer.from(String(attachment.data), 'base64');
  if (output.stamp) output.stamp.pdf = Buffer.from(String(output.stamp.pdf), 'base64');
  return output;
}
const isBufferJson = (value: unknown): value is { type: 'Buffer'; data: number[] } =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data);

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
