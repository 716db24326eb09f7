// What a `quire worker` does with one TeX job's payload, apart from BullMQ so its rules are
// plain to test: fetch the inputs from the blob store, run the job in the local sandboxed pool
// within the time the API node still waits, and leave the output and a result record beside
// them. A job the API node has stopped waiting for keeps nothing.
import { systemClock, type Clock } from '../clock.js';
import { isServiceError } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import { decodeOutput, outputKey, pageImageKey, pdfKey, resultKey, sha256, type RemoteFile, type RemoteJobData, type RemoteJobReturn, type RemoteMergeData, type StoredResult } from './contract.js';
import type { TexQueue } from './queue.js';

/** Left for the result to reach the blob store and the API node before its deadline. */
const WRITE_MARGIN_MS = 2_000;

export interface WorkerDeps {
  blobs: BlobStore;
  /** The local sandboxed pool the TeX jobs run in. */
  pool: Pick<TexQueue, 'run' | 'merge'>;
  clock?: Clock;
}

/** Runs one compile's payload. */
export async function processJob(data: RemoteJobData, deps: WorkerDeps): Promise<RemoteJobReturn> {
  const now = clockOf(deps);
  const budget = Math.min(data.timeoutMs, data.deadline - WRITE_MARGIN_MS - now());
  // The API node has stopped waiting (or will before we could finish): do nothing, keep nothing.
  if (budget <= 0) return { stored: false };

  const { files, missing } = await fetchInputs(deps.blobs, data.files);
  const output = data.output ? await deps.blobs.get(outputKey(data.prefix)) : null;
  if (data.output && !output) missing.push('output');
  if (missing.length > 0) return store(deps, data, { kind: 'input_missing', names: missing }, now);

  let result;
  try {
    result = await deps.pool.run({
      source: data.source,
      compiler: data.compiler,
      files,
      timeoutMs: budget,
      ...(data.cpuSeconds !== undefined ? { cpuSeconds: data.cpuSeconds } : {}),
      maxFileBytes: data.maxFileBytes,
      ...(data.keepPages !== undefined ? { keepPages: data.keepPages } : {}),
      ...(data.maxPasses !== undefined ? { maxPasses: data.maxPasses } : {}),
      ...(data.continueOnError ? { continueOnError: true } : {}),
      ...(data.preamble ? { preamble: data.preamble } : {}),
      ...(output ? { output: decodeOutput(output) } : {}),
      ...(data.yields ? { fairness: { caller: '', background: false, yields: true } } : {}),
    });
  } catch (err) {
    if (!isServiceError(err)) throw err;
    return store(deps, data, { kind: 'refused', code: err.code, message: err.message, details: err.details }, now);
  }
  // Stopped by the shortened budget, not by the plan's timeout: the caller is gone or going.
  if (result.outcome === 'timeout' && budget < data.timeoutMs) return { stored: false };

  if (result.pdf) await deps.blobs.put(pdfKey(data.prefix), result.pdf);
  for (const image of result.pageImages ?? []) await deps.blobs.put(pageImageKey(data.prefix, image.page), image.png);
  const { pdf: _pdf, pageImages, ...rest } = result;
  const images = pageImages?.map(({ page, width, height }) => ({ page, width, height }));
  return store(deps, data, { kind: 'ran', ...rest, ...(images ? { pageImages: images } : {}) }, now);
}

/** Runs one batch merge's payload. A qpdf failure is a result (the batch reports it), not a retry. */
export async function processMerge(data: RemoteMergeData, deps: WorkerDeps): Promise<RemoteJobReturn> {
  const now = clockOf(deps);
  if (data.deadline - WRITE_MARGIN_MS - now() <= 0) return { stored: false };
  const { files, missing } = await fetchInputs(deps.blobs, data.files);
  if (missing.length > 0) return store(deps, data, { kind: 'input_missing', names: missing }, now);
  let merged;
  try {
    merged = await deps.pool.merge({ pdfs: files.map((file) => file.data), maxBytes: data.maxBytes });
  } catch {
    return store(deps, data, { kind: 'merge_failed' }, now);
  }
  await deps.blobs.put(pdfKey(data.prefix), merged.pdf);
  return store(deps, data, { kind: 'merged', pages: merged.pages }, now);
}

const clockOf = (deps: WorkerDeps) => {
  const clock = deps.clock ?? systemClock;
  return () => clock.ms();
};

/** The inputs whose bytes are in the blob store and match their checksum; the names of the rest. */
async function fetchInputs(blobs: BlobStore, wanted: RemoteFile[]): Promise<{ files: Array<{ name: string; data: Buffer }>; missing: string[] }> {
  const files: Array<{ name: string; data: Buffer }> = [];
  const missing: string[] = [];
  for (const file of wanted) {
    const bytes = await blobs.get(file.key);
    if (bytes && sha256(bytes) === file.sha256) files.push({ name: file.name, data: bytes });
    else missing.push(file.name);
  }
  return { files, missing };
}

async function store(deps: WorkerDeps, data: { deadline: number; prefix: string }, result: StoredResult, now: () => number): Promise<RemoteJobReturn> {
  if (now() > data.deadline) {
    await deps.blobs.delete(pdfKey(data.prefix));
    return { stored: false };
  }
  await deps.blobs.put(resultKey(data.prefix), Buffer.from(JSON.stringify(result)));
  return { stored: true };
}
