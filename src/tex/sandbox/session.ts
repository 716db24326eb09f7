// A sandbox kept warm for the next job. Starting bubblewrap (namespaces, mounts) costs tens
// of milliseconds, as much as a small TeX run; a slot therefore starts its next sandbox as
// soon as a job ends. Inside, a tiny driver runs the commands we send, one per line, each
// under prlimit, and answers with "<exit code> <n>\n" followed by the first n bytes of the
// command's output (a pass answers "<exit code> 0": its output is asked for apart, quire-last,
// since every process the driver starts to measure and copy it costs milliseconds). Commands
// are ours (engine, helpers, qpdf); the document only ever reaches TeX through main.tex, and
// every command's output goes to a file first, the answer carrying its length: nothing a
// document prints can be mistaken for an answer.
//
// A warm engine (see warmEngineArgs in job.ts) is a TeX process the driver starts in the
// background while the sandbox waits: it loads its format, then blocks reading its first
// terminal line from a pipe only the driver holds. The job's first pass ("quire-go") lowers
// its limits to the job's with prlimit --pid, writes that line, and waits for it like any
// command. Any other command kills an unused warm engine first, so a warm engine serves at
// most one pass of the one job this sandbox exists for.
import { randomUUID } from 'node:crypto';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_LUA_CACHE, type SandboxSpec } from './sandbox.js';
import { gone, killSandboxed, launchSandboxed, type LaunchedSandbox } from './sandboxed.js';
import { removeWorkspace } from './workspace.js';

/** Output of a command kept for the caller (qpdf's answer, a helper's complaint). */
const OUTPUT_CAP = 64 * 1024;

const DRIVER = `
warm=
next=
pdf=
n=0
last=
stop_warm() {
  if [ -n "$warm" ]; then kill -9 "$warm" 2>/dev/null; wait "$warm" 2>/dev/null; warm=; exec 3>&-; fi
  if [ -n "$next" ]; then kill -9 "$next" 2>/dev/null; wait "$next" 2>/dev/null; next=; exec 5>&-; fi
  stop_pdf
}
start_warm() {
  mode=\${1-}
  # The second pass's engine started ahead with the first (quire-next): it is the warm one now.
  if [ "$mode" = again ] && [ -n "$next" ]; then
    exec 3<&5 5<&-; warm=$next; warmout=$nextout; next=
    [ -n "\${limits-}" ] && limit "$warm"
    return
  fi
  eval "set -- $warmline"; pdfline=$2; shift 2
  # The next pass's engine, started while this pass runs: told so, it opens no file this pass writes (LUA_PRELOAD_FONT in job.ts).
  [ "$mode" = again ] && set -- env QUIRE_AGAIN=1 "$@"
  # Names never used before: no rm before mkfifo, and no mv of the output after the pass (every process start costs).
  n=$((n + 1)); warmout="$QUIRE_OUT.warm$n"
  mkfifo -m 600 "$QUIRE_OUT.go$n" && exec 3<>"$QUIRE_OUT.go$n"; rm -f "$QUIRE_OUT.go$n"
  # The output file is opened here, before the fork: a pass that follows at once always finds it.
  exec 4>"$warmout"
  # Only its own pipe: not the other engine's (fd 5 or 6 while quire-next starts one).
  "$@" <&3 3<&- 5<&- 6<&- >&4 4>&- 2>&1 &
  warm=$!
  exec 4>&-
  # Started during a pass, the next pass's engine gets the job's limits at once, not at its go:
  # the pass running meanwhile could write that engine's line itself (a lualatex document can
  # open /proc/<driver>/fd/3), and it would run the document unlimited.
  [ "$mode" = again ] && [ -n "\${limits-}" ] && limit "$warm"
  :
}
# A warm xdvipdfmx (xelatex): started with the engine, it reads its configuration and font maps
# (a third of a second), then waits on a pipe. The engine's output driver (XDV_DRIVER in job.ts)
# writes the XDV into the .xdv FIFO, which "cat" relays into that pipe, and waits for the
# .status FIFO: xdvipdfmx's exit code, written by the subshell that waits for it. Its pid (for
# prlimit and kill) comes back through the .pdfpid FIFO before start_pdf returns, so a go-line
# sent at once finds it (read from a file the subshell wrote, a quick go once ran cold). All of
# it ends with the pass, used or not.
start_pdf() {
  [ -n "$pdfline" ] || return 0
  eval "set -- $pdfline"
  rm -f "$QUIRE_OUT.xdv" "$QUIRE_OUT.status" "$QUIRE_OUT.pipe" "$QUIRE_OUT.pdfpid"
  mkfifo -m 600 "$QUIRE_OUT.xdv" "$QUIRE_OUT.status" "$QUIRE_OUT.pipe" "$QUIRE_OUT.pdfpid" || return 0
  # Read and write ends of the pipe, opened without blocking (7 holds it open meanwhile), each
  # held by one process only: xdvipdfmx sees the end of the XDV when the relay ends, and the
  # relay a broken pipe if xdvipdfmx dies.
  exec 7<>"$QUIRE_OUT.pipe" 8<"$QUIRE_OUT.pipe" 9>"$QUIRE_OUT.pipe"; exec 7<&-; rm -f "$QUIRE_OUT.pipe"
  (exec 3>&- 9>&-; "$@" <&8 8<&- >"$QUIRE_OUT.pdfout" 2>&1 & echo $! >"$QUIRE_OUT.pdfpid"; exec 8<&-; wait $!; echo $? >"$QUIRE_OUT.status") &
  pdf=$!
  cat "$QUIRE_OUT.xdv" >&9 3>&- 8<&- 9>&- &
  relay=$!
  exec 8<&- 9>&-
  read pdfpid <"$QUIRE_OUT.pdfpid"; rm -f "$QUIRE_OUT.pdfpid"
}
stop_pdf() {
  if [ -n "$pdf" ]; then
    kill -9 $pdfpid "$relay" "$pdf" 2>/dev/null; wait "$relay" "$pdf" 2>/dev/null; pdf=; pdfpid=
    rm -f "$QUIRE_OUT.xdv" "$QUIRE_OUT.status"
  fi
}
# Lowers a warm process to the job's limits; fails when it has already ended. The state is
# read with the shell's own read: one process less per pass.
limit() {
  state=
  { while read -r key state rest; do [ "$key" = State: ] && break; state=; done <"/proc/$1/status"; } 2>/dev/null
  case $state in [RSD]) prlimit --pid "$1" $limits --core=0 2>/dev/null;; *) return 1;; esac
}
answer() {
  n=$(head -c ${OUTPUT_CAP} "$2" | wc -c)
  printf '%s %s\\n' "$1" "$n"
  head -c ${OUTPUT_CAP} "$2"
}
while IFS= read -r line; do
  eval "set -- $line"
  case "$1" in
  quire-warm)
    stop_warm; warmline=$line; start_warm; start_pdf
    printf '0 0\\n';;
  quire-next)
    # A second engine beside the warm one (no xdvipdfmx), for the pass after its: it waits on
    # its own pipe (fd 5) and becomes the warm engine when the first pass goes with "again".
    if [ -n "$warm" ] && [ -z "$pdfline" ] && [ -z "$next" ]; then
      first=$warm; firstout=$warmout; exec 6<&3 3<&-
      start_warm again
      next=$warm; nextout=$warmout; exec 5<&3 3<&6 6<&-; warm=$first; warmout=$firstout
      printf '0 0\\n'
    else
      printf '1 0\\n'
    fi;;
  quire-go)
    # A pass answers with its exit code only: its output (wanted only when TeX left no
    # transcript) is read by quire-last, which saves the processes that measure and copy it.
    limits="--cpu=$2 --fsize=$3 --as=$4 --nproc=$5"; again=$6; goline=$7; shift 7
    if [ -n "$warm" ] && limit "$warm" && { [ -z "$pdf" ] || { limit "$pdfpid" && limit "$relay"; }; }; then
      printf '%s\\n' "$goline" >&3; exec 3>&-
      current=$warm; warm=; last=$warmout
      # A rerun is likely: the next pass's engine loads its format while this pass runs.
      [ "$again" = 1 ] && start_warm again
      wait "$current"; code=$?
      # The next pass's xdvipdfmx starts once this pass's has ended: they share the FIFOs.
      stop_pdf; [ -n "$warm" ] && start_pdf
    else
      stop_warm
      last=$QUIRE_OUT.cold
      "$@" </dev/null >"$last" 2>&1; code=$?
    fi
    printf '%s 0\\n' "$code";;
  quire-last)
    if [ -n "$last" ]; then answer 0 "$last"; else printf '0 0\\n'; fi;;
  *)
    stop_warm
    "$@" </dev/null >"$QUIRE_OUT" 2>&1; answer $? "$QUIRE_OUT";;
  esac
done
stop_warm
`;

/** The limits a warm engine runs under from the job's first pass on (lowered from unlimited). */
export interface GoLimits {
  cpuSeconds: number;
  fileBytes: number;
  memoryBytes: number;
  processes: number;
}

export interface Exec {
  code: number;
  output: string;
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export class Session {
  private buffer = Buffer.alloc(0);
  private pending: { resolve: (exec: Exec) => void; reject: (err: Error) => void } | null = null;
  private exited: Error | null = null;
  private killed = false;
  /** The engine started ahead of time and not yet used (none once any command ran). */
  private warmEngine: string | undefined;
  /** A second engine started ahead beside it, for the pass after its (startNext). */
  private nextEngine = false;

  private constructor(
    readonly dir: string,
    readonly uid: number | undefined,
    /** Where the job sees the prepared lualatex cache (mounted read-only, or on the host without isolation). */
    readonly luaCache: string | undefined,
    /** The inflated formats mounted in this sandbox (their host folder), if any. */
    readonly formats: string | undefined,
    private readonly child: LaunchedSandbox,
  ) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.deliver();
    });
    child.stdin.on('error', () => {});
    child.on('close', (code, signal) => {
      // bubblewrap's complaint (a mount, a namespace it could not make) is all that says why a
      // sandbox ended at its start: the error carries it, and the log of a 500 with it.
      const why = child.stderrHead().trim();
      this.exited = new Error(`sandbox exited (${signal ?? code})${why ? `: ${why}` : ''}`);
      this.pending?.reject(this.exited);
      this.pending = null;
    });
  }

  /** Starts a sandbox over a new, empty workspace under `root`. */
  static async open(root: string, uid: number | undefined, spec: Omit<SandboxSpec, 'workspace' | 'uid'>): Promise<Session> {
    const dir = join(root, randomUUID());
    await mkdir(dir, { mode: 0o700 });
    if (uid !== undefined) await chown(dir, uid, uid);
    const out = spec.isolate ? '/tmp/.quire-out' : join(dir, '.quire-out');
    const env = { ...spec.env, QUIRE_OUT: out };
    const child = await launchSandboxed({ ...spec, workspace: dir, env, uid }, ['sh', '-c', DRIVER]);
    // A warm sandbox waiting for work must not keep the process alive.
    child.unref();
    const luaCache = spec.luaCache === undefined ? undefined : spec.isolate ? SANDBOX_LUA_CACHE : spec.luaCache;
    return new Session(dir, uid, luaCache, spec.formats, child);
  }

  get alive(): boolean {
    return !this.exited && !this.killed;
  }

  /** The engine waiting in this sandbox for the job's first pass, if any. */
  get engine(): string | undefined {
    return this.warmEngine;
  }

  /** Whether a second engine waits for the pass after the warm one's (`go` with `again` uses it). */
  get next(): boolean {
    return this.nextEngine;
  }

  /** The sandbox's outermost process on the host (bubblewrap): its descendants are the job's (paused-cache.ts measures them). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Starts `argv` (a TeX engine whose first line waits on the terminal) in the background,
   * without limits until the job's are known; `engine` names it for `engine`. `pdf`: the
   * warm xdvipdfmx that the engine's output driver feeds (an xelatex engine; see the driver).
   */
  async startEngine(engine: string, argv: string[], pdf?: string[]): Promise<void> {
    await this.run(['quire-warm', pdf ? pdf.map(quote).join(' ') : '', ...argv]);
    this.warmEngine = engine;
  }

  /**
   * Starts the warm engine's command a second time, beside it, for the pass after its: a job
   * that needs two passes finds the second's engine loaded too (a primed format's two-pass
   * documents, primed-formats.ts). Not beside a warm xdvipdfmx. Ended like the warm one by any
   * other command, or used by `go` with `again`.
   */
  async startNext(): Promise<void> {
    if (this.warmEngine === undefined) return;
    this.nextEngine = (await this.send(['quire-next'])).code === 0;
  }

  /**
   * A pass of the job: the warm engine under `limits` when it still waits, otherwise `cold`
   * (the same pass started the ordinary way, its own limits included). `again`: another
   * pass is likely, so the same engine starts anew, ahead of time, while this one runs.
   * `line`: what the engine reads (a paused preamble's go-line, see paused.ts); empty by default.
   * The answer's output is empty: `passOutput` reads it when it is wanted.
   */
  go(limits: GoLimits, cold: string[], again = false, line = ''): Promise<Exec> {
    const { cpuSeconds, fileBytes, memoryBytes, processes } = limits;
    const engine = this.warmEngine;
    const pass = this.run(['quire-go', String(cpuSeconds), String(fileBytes), String(memoryBytes), String(processes), again ? '1' : '0', line, ...cold]);
    // With `again`, the driver started the same engine anew for the next pass (when this one was
    // warm), or made the second engine (startNext) the warm one.
    if (again) this.warmEngine = engine;
    return pass;
  }

  /** What the last pass (`go`) printed, up to the output cap. Only reads: a warm engine keeps waiting. */
  async passOutput(): Promise<string> {
    return (await this.send(['quire-last'])).output;
  }

  /** Runs one command; rejects when the sandbox dies (killed on timeout, or broken). */
  run(argv: string[]): Promise<Exec> {
    // Whatever the command, the driver uses or ends the warm engine (and the second) before it runs.
    this.warmEngine = undefined;
    this.nextEngine = false;
    return this.send(argv);
  }

  private send(argv: string[]): Promise<Exec> {
    if (this.exited) return Promise.reject(this.exited);
    if (this.pending) return Promise.reject(new Error('session busy'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin.write(argv.map(quote).join(' ') + '\n');
    });
  }

  private deliver(): void {
    if (!this.pending) return;
    const newline = this.buffer.indexOf(10);
    if (newline < 0) return;
    const [code, length] = this.buffer.subarray(0, newline).toString().split(' ').map(Number);
    if (this.buffer.length < newline + 1 + length!) return;
    const output = this.buffer.subarray(newline + 1, newline + 1 + length!).toString('utf8');
    this.buffer = this.buffer.subarray(newline + 1 + length!);
    const { resolve } = this.pending;
    this.pending = null;
    resolve({ code: code!, output });
  }

  /** Kills every process of the sandbox (its process group, and with bwrap the PID namespace). */
  kill(): void {
    if (this.killed) return;
    this.killed = true;
    killSandboxed(this.child);
  }

  /**
   * Ends the sandbox and deletes the workspace with everything the job wrote. An idle driver
   * exits on end of input (and the PID namespace with it); a killed one is waited for until
   * the kernel has taken every process of the job down.
   */
  async close(stopped = false): Promise<void> {
    if (!this.exited) {
      const closed = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
      if (this.pending) this.kill();
      this.child.stdin.end();
      const timer = setTimeout(() => this.kill(), 2000);
      await closed;
      clearTimeout(timer);
    }
    // bwrap's init inside the namespace can outlive the outer bwrap by a moment; a stopped
    // job (killed, or ended by a limit) is waited for until none of its processes is left.
    if (this.killed || stopped) await gone(this.uid);
    await removeWorkspace(this.dir);
  }
}
