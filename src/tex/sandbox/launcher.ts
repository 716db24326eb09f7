// Starts sandboxes from a small helper process instead of this one. Node's spawn forks
// the service itself, and a fork copies the parent's page tables while the event loop waits:
// from a service of a few hundred megabytes that was about a fifth of the main thread's time
// in a loop of one-pagers (one sandbox per job), and 25 ms of a blocked event loop per chktex
// or kpsewhich of a validate call (issue 37). A Perl process of a few megabytes (perl-base
// is part of every Debian system) forks instead. The sandbox's stdin and stdout (and stderr,
// when the caller keeps it) are FIFOs
// the helper makes in a private folder; the service opens them as soon as the helper answers
// with the pid, the child opens them before it runs the command, and removes them, so
// nothing else can reach them. The helper reports each child's exit; when the service dies its
// stdin ends, it exits, and every sandbox (--die-with-parent) with it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, constants, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { processTag } from './sweep.js';

const HELPER = String.raw`
use strict; use POSIX ();
$| = 1;
my $live = 0;
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    $live--;
    my $status = $?;
    print "exit $pid ", ($status & 127 ? "signal " . ($status & 127) : "code " . ($status >> 8)), "\n";
  }
}
# Exits are reaped here in the loop only. Perl runs a signal handler between two of its own
# steps, never inside a system call: a child that exits after the last such step and before the
# wait for input begins leaves its SIGCHLD handled but nothing reaped, and a wait without a
# timeout slept on until the next request (a loop of launches and kills hung about once in 500
# so). The handler exists to interrupt the wait (no SA_RESTART); while a child lives the wait
# also wakes every 100 ms to reap what a lost interruption missed.
$SIG{CHLD} = sub {};
my $pending = '';
my $ended = 0;
while (1) {
  reap();
  if ($pending !~ /\n/) {
    last if $ended;
    my $readable = '';
    vec($readable, fileno(STDIN), 1) = 1;
    next if select($readable, undef, undef, $live > 0 ? 0.1 : undef) <= 0;
    my $got = sysread(STDIN, $pending, 65536, length $pending);
    next if !defined $got && $! == POSIX::EINTR();
    $ended = 1 if !$got;
    next;
  }
  $pending =~ s/^([^\n]*)\n//;
  my $line = $1;
  my ($id, $in, $out, $err, $uid, @argv) = map { pack('H*', $_) } split / /, $line;
  my @fifos = grep { $_ ne '' } ($in, $out, $err);
  if (grep { !POSIX::mkfifo($_, 0600) } @fifos) { unlink @fifos; print "fail $id\n"; next; }
  # The pid is answered once the child leads its own session: a kill of its process group
  # right after the answer must reach it.
  pipe(my $led, my $leading) or do { unlink @fifos; print "fail $id\n"; next; };
  my $pid = fork();
  if (!defined $pid) { unlink @fifos; close $led; close $leading; print "fail $id\n"; next; }
  if ($pid == 0) {
    $SIG{CHLD} = 'DEFAULT';
    close $led;
    POSIX::setsid();
    close $leading;
    # The service opens both ends at once; a service that died meanwhile leaves nobody to wait for.
    alarm 30;
    open(STDIN, '<', $in) or POSIX::_exit(126);
    open(STDOUT, '>', $out) or POSIX::_exit(126);
    open(STDERR, '>', $err ne '' ? $err : '/dev/null') or POSIX::_exit(126);
    alarm 0;
    unlink @fifos;
    if ($uid ne '') { $( = $uid; $) = "$uid $uid"; $< = $> = $uid; POSIX::_exit(126) if $> != $uid; }
    %ENV = ();
    exec { $argv[0] } @argv;
    POSIX::_exit(127);
  }
  $live++;
  close $leading;
  1 while !defined(sysread($led, my $byte, 1)) && $! == POSIX::EINTR();
  close $led;
  print "pid $id $pid\n";
}
`;

/** A started sandbox, as much of a ChildProcess as a session uses. */
export interface SandboxProcess {
  readonly pid?: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** The sandbox's stderr, when the launch asked to keep it (else it goes to /dev/null). */
  readonly stderr?: Readable | undefined;
  /** 'close' (code, signal) once the process has exited and its stdout has ended. */
  on(event: 'close', listener: (code: number | null, signal: string | null) => void): this;
  once(event: 'close', listener: (code: number | null, signal: string | null) => void): this;
  unref(): void;
}

/** The FIFOs of one launch: what the service writes, and what it reads (stdout, maybe stderr). */
interface Fifos {
  in: string;
  reads: string[];
}

class Launched extends EventEmitter implements SandboxProcess {
  private exit: [number | null, string | null] | null = null;
  /** Read ends (stdout, stderr) not yet closed. */
  private open: number;
  /** Whether this sandbox keeps the process alive (until unref or its exit). */
  held = true;

  constructor(
    readonly pid: number,
    readonly stdin: Socket,
    readonly stdout: Socket,
    readonly stderr: Socket | undefined,
    private readonly fifos: Fifos,
    private readonly released: () => void,
  ) {
    super();
    const reads = stderr ? [stdout, stderr] : [stdout];
    this.open = reads.length;
    for (const read of reads) {
      read.on('close', () => {
        this.open--;
        this.settle();
      });
    }
    stdin.on('error', () => {});
  }

  exited(code: number | null, signal: string | null): void {
    this.exit = [code, signal];
    this.release();
    // A child killed before it opened its stdout never was that FIFO's writer, and a reader
    // that never saw a writer never sees the end: one opening and closing it ends it. (A
    // child that opened its FIFOs has removed them: then the end comes by itself.)
    for (const read of this.fifos.reads) {
      try {
        closeSync(openSync(read, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // removed by the child, or ours already ended
      }
    }
    for (const path of [this.fifos.in, ...this.fifos.reads]) rmSync(path, { force: true });
    this.settle();
  }

  private release(): void {
    if (!this.held) return;
    this.held = false;
    this.released();
  }

  private settle(): void {
    if (this.exit && this.open === 0) this.emit('close', ...this.exit);
  }

  /** Like ChildProcess.unref: the exit no longer keeps the process alive (open pipes still do). */
  unref(): void {
    this.release();
  }
}

const TAKEN_POLL_MS = 2;

/**
 * Holds a second writer on the stdin FIFO until the child has opened it (it removes both FIFOs
 * once it has) or has exited. A caller that writes and ends stdin before a slow child reaches
 * its open() would otherwise close the FIFO's last descriptor: the kernel drops what was
 * written, and the child waits in open() for a writer that never comes (a full-suite run lost
 * one of forty launches so). Usually the first look finds the FIFO already gone.
 */
function keepOpenUntilTaken(inPath: string): void {
  let keeper: number;
  try {
    keeper = openSync(inPath, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return; // already opened and removed by the child, or the child is gone
  }
  // The child removes the FIFO once it opened it; an exit report removes it too (exited()).
  const look = () => {
    if (!existsSync(inPath)) closeSync(keeper);
    else setTimeout(look, TAKEN_POLL_MS).unref();
  };
  look();
}

/** The helper ended before it answered (or could not start: see `unavailable`). */
export class LauncherExited extends Error {
  constructor() {
    super('the sandbox launcher exited');
  }
}

interface Waiting {
  resolve: (pid: number) => void;
  reject: (err: Error) => void;
}

export class Launcher {
  private helper: ChildProcessWithoutNullStreams | null = null;
  private folder = '';
  private seq = 0;
  private readonly waiting = new Map<string, Waiting>();
  private readonly running = new Map<number, Launched>();
  /** Exits reported before their launch was registered (a child that failed to start). */
  private readonly early = new Map<number, [number | null, string | null]>();
  /** Launches under way and sandboxes not unref'd: while any, the helper's answers keep the process alive. */
  private holds = 0;
  /** Set when the helper cannot run at all (no perl): callers start their sandboxes themselves. */
  unavailable = false;

  constructor(private readonly perl = 'perl') {}

  /**
   * Starts `file` with `args` (bubblewrap), as `uid` when given, with an empty environment;
   * its stderr is kept (`stderr` of the answer) when `keepStderr`, else it goes to /dev/null.
   */
  async launch(file: string, args: string[], uid?: number, keepStderr = false): Promise<SandboxProcess> {
    const helper = this.start();
    const id = String(++this.seq);
    const inPath = join(this.folder, `${id}.in`);
    const outPath = join(this.folder, `${id}.out`);
    const errPath = keepStderr ? join(this.folder, `${id}.err`) : '';
    const fields = [id, inPath, outPath, errPath, uid === undefined ? '' : String(uid), file, ...args];
    this.hold(1);
    const pid = await new Promise<number>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      helper.stdin.write(fields.map((field) => Buffer.from(field).toString('hex')).join(' ') + '\n');
    }).finally(() => this.hold(-1));
    // Both FIFOs exist now; the child waits in open() for these ends.
    const reader = (path: string) => new Socket({ fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
    const stdout = reader(outPath);
    const stderr = keepStderr ? reader(errPath) : undefined;
    const stdin = new Socket({ fd: openSync(inPath, constants.O_RDWR | constants.O_NONBLOCK), readable: false, writable: true });
    this.hold(1);
    const fifos = { in: inPath, reads: keepStderr ? [outPath, errPath] : [outPath] };
    const launched = new Launched(pid, stdin, stdout, stderr, fifos, () => this.hold(-1));
    keepOpenUntilTaken(inPath);
    const early = this.early.get(pid);
    this.early.delete(pid);
    if (early) launched.exited(...early);
    else this.running.set(pid, launched);
    return launched;
  }

  /** Ends the helper (sandboxes still running die with it). */
  close(): void {
    this.helper?.stdin.end();
    this.helper = null;
  }

  private hold(change: number): void {
    this.holds += change;
    const answers = this.helper?.stdout as unknown as Socket | undefined;
    if (this.holds > 0) answers?.ref();
    else answers?.unref();
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.helper) return this.helper;
    // Named after this process: after a kill -9 the next start removes it (sweep.ts).
    this.folder = mkdtempSync(join(tmpdir(), `quire-launch-${processTag()}-`));
    const helper = spawn(this.perl, ['-e', HELPER], { stdio: ['pipe', 'pipe', 'pipe'] });
    helper.stderr.resume();
    helper.stdin.on('error', () => {});
    // Only a helper that could not start emits 'error' (ENOENT: no perl); nothing else will answer.
    helper.on('error', () => {
      this.unavailable = true;
      if (this.helper === helper) this.helper = null;
      for (const waiting of this.waiting.values()) waiting.reject(new LauncherExited());
      this.waiting.clear();
    });
    createInterface({ input: helper.stdout }).on('line', (line) => this.answer(line));
    const folder = this.folder;
    helper.on('close', () => {
      rmSync(folder, { recursive: true, force: true });
      if (this.helper === helper) this.helper = null;
      for (const waiting of this.waiting.values()) waiting.reject(new LauncherExited());
      this.waiting.clear();
      for (const launched of this.running.values()) launched.exited(null, 'SIGKILL');
      this.running.clear();
    });
    // The helper must not keep the service alive once nothing else does.
    helper.unref();
    (helper.stdout as unknown as Socket).unref();
    (helper.stdin as unknown as Socket).unref();
    (helper.stderr as unknown as Socket).unref();
    this.helper = helper;
    return helper;
  }

  private answer(line: string): void {
    const [kind, id, a, b] = line.split(' ');
    if (kind === 'pid' || kind === 'fail') {
      const waiting = this.waiting.get(id!);
      this.waiting.delete(id!);
      if (kind === 'pid') waiting?.resolve(Number(a));
      else waiting?.reject(new Error('the sandbox launcher could not start a sandbox'));
    } else if (kind === 'exit') {
      const pid = Number(id);
      const launched = this.running.get(pid);
      this.running.delete(pid);
      const status: [number | null, string | null] = [a === 'code' ? Number(b) : null, a === 'signal' ? `signal ${b}` : null];
      if (launched) launched.exited(...status);
      else this.early.set(pid, status);
    }
  }
}
