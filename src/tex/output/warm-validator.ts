// Warm PDF/A-1b validators (issue 23's speed goal). A cold Preflight in the job's sandbox costs
// 0.4–1 s, nearly all of it the JVM starting and loading PDFBox; a validation in a warm JVM
// costs 10–30 ms. So up to `count` PreflightServer JVMs (preflight-java.ts) wait, each in a
// fresh sandbox of its own (its own workspace and uid, nothing of any job), having validated
// a sample twice. A PDF/A-1b job takes one and hands it the PDF's bytes (read with the job
// workspace's safe reader, never a path). The JVM then belongs to the job's scope (an account,
// a keyless address, the gallery: the boundary formats and paused preambles keep too): it is
// kept for that scope's next PDF/A-1b job, at most MAX_USES jobs and KEPT_IDLE_MS idle, and
// never serves another scope, since the PDF is hostile and nothing may carry over to another
// caller. A job without a scope ends its JVM. Whatever does not end in a verdict (gone,
// crashed, too slow, a PDF too large) ends the JVM and leaves the job to the cold path
// (pdfa-check.ts), within its deadline. Started on the first PDF/A-1b validation, one started
// after each validation while fewer than `count` fresh ones wait; idle ones end after maxIdleMs.
import { randomBytes, randomUUID } from 'node:crypto';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MEMORY_BYTES, PROCESSES } from '../job.js';
import type { SandboxProcess } from '../sandbox/launcher.js';
import { gone, killSandboxed, launchSandboxed } from '../sandbox/sandboxed.js';
import type { Exec } from '../sandbox/session.js';
import { leaveOwnerFolder, ownerFolder } from '../sandbox/sweep.js';
import { VALIDATOR_UIDS } from '../sandbox/uids.js';
import { removeWorkspace } from '../sandbox/workspace.js';
import { PDFBOX_CLASSPATH, preflightJar } from './preflight-java.js';
import { preflightSample } from './preflight-sample.js';

/** The JVM's bounds (heap, class space, code cache; one compiler thread), cold or warm. */
export const JVM = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:CICompilerCount=1', '-Xss1m', '-Xmx512m', '-XX:ReservedCodeCacheSize=32m', '-XX:CompressedClassSpaceSize=64m', '-XX:MaxMetaspaceSize=128m', '-Djava.awt.headless=true'];
/** Largest PDF a warm validator takes (its copy goes into its own workspace); larger ones run cold. */
export const VALIDATOR_MAX_BYTES = 128 * 1024 * 1024;
/** Preflight's answer kept, as the cold path's session keeps (session.ts). */
const OUTPUT_CAP = 64 * 1024;
/** A validator not ready by then is ended (the machine is too busy for it to help). */
const START_MS = 60_000;
/** CPU seconds of a validator's whole life: its warm-up (about 1 s) and one PDF (the job's wall clock bounds it first). */
const CPU_SECONDS = 300;
/** A validation without a deadline (none given) gets this long. */
const DEFAULT_MS = 60_000;
/** Validations one JVM answers for its scope before it is ended (its heap and caches start over). */
export const MAX_USES = 100;
/** JVMs kept for scopes at once (about 85 MB each), the least recently used ended first. */
export const MAX_KEPT = 4;
/** A JVM kept for a scope and unused this long is ended. */
const KEPT_IDLE_MS = 2 * 60 * 1000;

const JAR = '.quire-preflight.jar';
const SAMPLE = '.quire-sample.pdf';
const INPUT = 'job.pdf';

export interface ValidatorStats {
  /** PDF/A-1b validations a warm validator answered, and their milliseconds together. */
  warm: number;
  warmMs: number;
  /** Validations that ran cold in the job's sandbox (none ready, turned off, or a warm one failed), and theirs. */
  cold: number;
  coldMs: number;
  /** Validators started; those that ended before they answered (never ready, died, or failed a job); those ended idle. */
  started: number;
  failed: number;
  expired: number;
  /** Validators ready and waiting now. */
  ready: number;
}

export function validatorStats(): ValidatorStats {
  return { warm: 0, warmMs: 0, cold: 0, coldMs: 0, started: 0, failed: 0, expired: 0, ready: 0 };
}

export interface WarmValidatorOptions {
  /** Most validators waiting (0 turns them off: every validation runs cold). */
  count: number;
  /** The work root; validators' workspaces go into this process's folder there (sweep.ts). */
  workRoot: string;
  isolate: boolean;
  /** The TeX image (its JDK and PDFBox) the validators run in; none: the host's. */
  root: string | undefined;
  /** The uid of validator uid index n (0 ≤ n < VALIDATOR_UIDS); none: the service's own. */
  uid?: (n: number) => number | undefined;
  /** A validator waiting longer is ended (default 10 minutes). */
  maxIdleMs?: number;
  stats?: ValidatorStats;
}

/** One PreflightServer JVM in its own sandbox, for the PDFs of one scope, one at a time. */
class Validator {
  /** Validations answered. */
  uses = 0;
  /** Resolves true once it said READY, false if it ended first. */
  readonly ready: Promise<boolean>;
  /** Resolves with the exit code once the sandbox has ended. */
  readonly exited: Promise<number | null>;
  isReady = false;
  /** Ready and counted as waiting by the pool: only then may a job take it. */
  admitted = false;
  alive = true;
  private output = Buffer.alloc(0);
  /** Where the answer starts in `output`: after the READY line. */
  private answerAt = -1;
  /** The current validation's output and exit code: from its END line, else from the exit. */
  private answer: Promise<Exec> = Promise.resolve({ code: -1, output: '' });
  private answered: (answer: Exec) => void = () => {};

  constructor(
    readonly child: SandboxProcess,
    readonly dir: string,
    readonly uid: number | undefined,
    readonly index: number,
    /** The END line's nonce. */
    private readonly nonce: string,
  ) {
    let readied: (ready: boolean) => void = () => {};
    this.ready = new Promise((resolve) => (readied = resolve));
    child.stdin.on('error', () => {});
    child.stdout.on('data', (chunk: Buffer) => {
      const room = (this.answerAt < 0 ? OUTPUT_CAP : this.answerAt + OUTPUT_CAP + 64) - this.output.length;
      if (room > 0) this.output = Buffer.concat([this.output, chunk.subarray(0, room)]);
      if (this.answerAt < 0) {
        const at = this.output.indexOf('READY\n');
        if (at === 0 || (at > 0 && this.output[at - 1] === 10)) {
          this.answerAt = at + 6;
          this.isReady = true;
          readied(true);
        }
      }
      if (this.answerAt >= 0) this.lookForEnd();
    });
    this.exited = new Promise((resolve) =>
      child.on('close', (code) => {
        this.alive = false;
        readied(false);
        this.answered({ code: code ?? -1, output: this.output.subarray(Math.max(this.answerAt, 0), this.answerAt + OUTPUT_CAP).toString('utf8') });
        resolve(code);
      }),
    );
  }

  /** The END line with our nonce, at a line start, ends the answer; the next one starts after it. */
  private lookForEnd(): void {
    const answer = this.output.subarray(this.answerAt);
    const at = answer.indexOf(`END ${this.nonce} `);
    if (at < 0 || (at > 0 && answer[at - 1] !== 10)) return;
    const line = /^END \S+ (\d+)\n/.exec(answer.subarray(at, at + 64).toString('latin1'));
    if (!line) return;
    this.answered({ code: Number(line[1]), output: answer.subarray(0, Math.min(at, OUTPUT_CAP)).toString('utf8') });
    this.output = Buffer.from(answer.subarray(at + line[0].length));
    this.answerAt = 0;
  }

  /** Preflight's answer on `pdf`, or null when it gave none (gone, killed at `timeoutMs` or by `signal`, no verdict). */
  async validate(pdf: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Exec | null> {
    if (!this.alive || !this.isReady || timeoutMs <= 0 || signal?.aborted) return null;
    const kill = () => this.kill();
    const timer = setTimeout(kill, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    try {
      this.answer = new Promise((resolve) => (this.answered = resolve));
      const length = Buffer.alloc(4);
      length.writeUInt32BE(pdf.length);
      this.child.stdin.write(length);
      this.child.stdin.write(pdf);
      const { code, output } = await this.answer;
      this.uses++;
      // Only a verdict counts: VALID (exit 0), or Preflight's error lines (exit 2).
      if (code === 0 && /^VALID$/m.test(output)) return { code, output };
      if (code === 2 && /^\d+(\.\d+)*\s/m.test(output)) return { code, output };
      return null;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
    }
  }

  kill(): void {
    this.alive = false;
    killSandboxed(this.child);
  }

  /** Ends the JVM (if still running), waits for its uid's processes to go, removes its workspace. */
  async end(): Promise<void> {
    if (this.alive) this.kill();
    await this.exited;
    await gone(this.uid);
    await removeWorkspace(this.dir).catch(() => {});
  }
}

export class WarmValidators {
  readonly stats: ValidatorStats;
  /** Started (ready or not) and not taken, in start order. */
  private readonly waiting = new Set<Validator>();
  /** JVMs that answered a scope's job, kept for its next one: by scope, least recently used first. */
  private readonly kept = new Map<string, { validator: Validator; timer: NodeJS.Timeout }>();
  /** Starts not yet launched (building the jar or the sample, writing the workspace). */
  private starting = 0;
  /** Every validator not yet ended, taken ones included (close ends them). */
  private readonly live = new Set<Validator>();
  private readonly ending = new Set<Promise<void>>();
  /** Uid indexes in use, until their validator's processes are gone. */
  private readonly indexes = new Set<number>();
  private folder: Promise<string> | null = null;
  private closed = false;

  constructor(private readonly options: WarmValidatorOptions) {
    this.stats = options.stats ?? validatorStats();
  }

  /**
   * Preflight's answer on the PDF `read` gives, from a ready validator, or null (none ready,
   * the PDF unreadable or too large, or no verdict: the caller then runs it cold). The
   * validator is taken at once (before anything is awaited) and ended afterwards.
   */
  async serve(read: () => Promise<Buffer | null | 'over'>, deadline: number | undefined, signal?: AbortSignal, scope?: string): Promise<Exec | null> {
    const validator = (scope !== undefined ? this.takeKept(scope) : null) ?? this.take();
    if (!validator) return null;
    let answer: Exec | null = null;
    try {
      const pdf = await read().catch(() => null);
      if (!(pdf instanceof Buffer) || pdf.length > VALIDATOR_MAX_BYTES) return null;
      answer = await validator.validate(pdf, (deadline ?? performance.now() + DEFAULT_MS) - performance.now(), signal);
      if (!answer) this.stats.failed++;
      return answer;
    } finally {
      if (answer && scope !== undefined && validator.alive && validator.uses < MAX_USES && !this.closed) this.keep(scope, validator);
      else this.end(validator);
    }
  }

  /** The JVM kept for `scope`, if it is still there. */
  private takeKept(scope: string): Validator | null {
    const kept = this.kept.get(scope);
    if (!kept) return null;
    this.kept.delete(scope);
    clearTimeout(kept.timer);
    return kept.validator.alive ? kept.validator : (this.end(kept.validator), null);
  }

  /** Keeps `validator` for `scope`'s next job, within MAX_KEPT and KEPT_IDLE_MS. */
  private keep(scope: string, validator: Validator): void {
    const timer = setTimeout(() => {
      if (this.kept.get(scope)?.validator !== validator) return;
      this.kept.delete(scope);
      this.stats.expired++;
      this.end(validator);
    }, KEPT_IDLE_MS);
    timer.unref();
    this.kept.set(scope, { validator, timer });
    for (const [oldest, { validator: old, timer: oldTimer }] of this.kept) {
      if (this.kept.size <= MAX_KEPT) break;
      this.kept.delete(oldest);
      clearTimeout(oldTimer);
      this.end(old);
    }
  }

  /** Counts a validation (`warm`: a validator answered) and its milliseconds. */
  served(warm: boolean, ms: number): void {
    if (warm) {
      this.stats.warm++;
      this.stats.warmMs += ms;
    } else {
      this.stats.cold++;
      this.stats.coldMs += ms;
    }
  }

  /**
   * Starts validators until `count` wait: called after each PDF/A-1b validation (the first
   * one starts them), off the job's path. A failed start is not retried before the next.
   */
  refill(): void {
    while (!this.closed && this.waiting.size + this.starting < this.options.count) {
      const index = [...Array(VALIDATOR_UIDS).keys()].find((n) => !this.indexes.has(n));
      if (index === undefined) return;
      this.indexes.add(index);
      this.starting++;
      this.stats.started++;
      void this.start(index);
    }
  }

  /** The scopes a JVM is kept for, least recently used first (tests). */
  keptScopes(): string[] {
    return [...this.kept.keys()];
  }

  /** The outer pids (bubblewrap) of the validators ready now (tests). */
  pids(): number[] {
    return [...this.waiting].filter((v) => v.admitted && v.alive).flatMap((v) => (v.child.pid !== undefined ? [v.child.pid] : []));
  }

  /** Ends every validator (service shutdown; jobs have ended) and leaves the work folder. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.kept.values()) clearTimeout(timer);
    this.kept.clear();
    // A start not yet launched gives up at its next step (it sees `closed`).
    while (this.starting > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const validator of this.live) this.end(validator);
    await Promise.all(this.ending);
    const folder = await this.folder?.catch(() => null);
    if (folder) await leaveOwnerFolder(folder).catch(() => {});
  }

  private take(): Validator | null {
    for (const validator of this.waiting) {
      if (!validator.admitted || !validator.alive) continue;
      this.waiting.delete(validator);
      this.stats.ready--;
      return validator;
    }
    return null;
  }

  private async start(index: number): Promise<void> {
    const uid = this.options.uid?.(index);
    let dir: string | undefined;
    let validator: Validator;
    try {
      const [jar, sample] = await Promise.all([preflightJar(), preflightSample(this.options.isolate)]);
      if (this.closed) throw new Error('closed');
      this.folder ??= ownerFolder(this.options.workRoot);
      dir = join(await this.folder, `validator-${randomUUID()}`);
      await mkdir(dir, { mode: 0o700 });
      await writeFile(join(dir, JAR), jar, { flag: 'wx', mode: 0o644 });
      await writeFile(join(dir, SAMPLE), sample, { flag: 'wx', mode: 0o644 });
      if (uid !== undefined) await chown(dir, uid, uid);
      if (this.closed) throw new Error('closed');
      const limits = { cpuSeconds: CPU_SECONDS, fileBytes: VALIDATOR_MAX_BYTES, memoryBytes: MEMORY_BYTES, processes: PROCESSES };
      const nonce = randomBytes(16).toString('hex');
      const argv = ['java', ...JVM, '-cp', [JAR, ...PDFBOX_CLASSPATH].join(':'), 'PreflightServer', SAMPLE, INPUT, nonce];
      const child = await launchSandboxed({ workspace: dir, env: {}, isolate: this.options.isolate, limits, uid, root: this.options.root }, argv);
      // A waiting validator must not keep the process alive.
      child.unref();
      validator = new Validator(child, dir, uid, index, nonce);
      this.live.add(validator);
      this.waiting.add(validator);
    } catch {
      if (!this.closed) this.stats.failed++;
      if (dir) await removeWorkspace(dir).catch(() => {});
      this.indexes.delete(index);
      return;
    } finally {
      this.starting--;
    }
    // Closed meanwhile: close() ends it (it is live) and `ready` turns false.
    const timer = setTimeout(() => validator.kill(), START_MS);
    const ready = await validator.ready;
    clearTimeout(timer);
    if (!ready || this.closed) {
      if (!this.closed) this.stats.failed++;
      this.waiting.delete(validator);
      this.end(validator);
      return;
    }
    this.stats.ready++;
    validator.admitted = true;
    this.watch(validator);
  }

  /** A ready validator that dies, or waits past maxIdleMs, goes. */
  private watch(validator: Validator): void {
    const leave = (expired: boolean) => {
      clearTimeout(idle);
      if (!this.waiting.delete(validator)) return;
      this.stats.ready--;
      if (expired) this.stats.expired++;
      else if (!this.closed) this.stats.failed++;
      this.end(validator);
    };
    const idle = setTimeout(() => leave(true), this.options.maxIdleMs ?? 10 * 60 * 1000);
    idle.unref();
    void validator.exited.then(() => leave(false));
  }

  /** Ends `validator` in the background; its uid index is free once its processes are gone. */
  private end(validator: Validator): void {
    if (!this.live.delete(validator)) return;
    const ending = validator.end().finally(() => {
      this.indexes.delete(validator.index);
      this.ending.delete(ending);
    });
    this.ending.add(ending);
  }
}
