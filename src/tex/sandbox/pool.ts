// The warm sandbox per slot. Starting bubblewrap costs tens of milliseconds, as much as a
// small TeX run: when a job on a uid ends, that uid's next sandbox starts at once, its likely
// engine loading its format ahead of time (see session.ts). The pool also holds what every
// sandbox of this process mounts or copies: its folder under the work root (swept once),
// the inflated formats and the lualatex font cache.
import { existsSync } from 'node:fs';
import type { Compiler } from '../compilers.js';
import { CORE_MAP, type FontMaps } from '../caches/font-map.js';
import type { Formats } from '../caches/formats.js';
import { MEMORY_BYTES, PROCESSES, WARM_XDVIPDFMX, warmEngineArgs } from '../job.js';
import { KPATHSEA_USERS, preloadPath } from './kpse-hash.js';
import { prlimit, SANDBOX_FORMATS, type ProcessLimits } from './sandbox.js';
import { Session } from './session.js';
import { claimWorkRoot, leaveOwnerFolder, ownerFolder, sweepLaunchFolders, sweepWorkRoot } from './sweep.js';

export interface PoolOptions {
  /** Parent of the per-job workspaces; job uids must be able to traverse it. */
  workRoot: string;
  isolate: boolean;
  /** The TeX image the sandboxes get as their root; none: the host's TeX Live. */
  root: string | undefined;
  /** Inflates (once, when the pool starts) the engines' formats; see formats.ts. */
  formats?: () => Promise<Formats>;
  /** Builds (once, on the first lualatex job) the luaotfload cache; see luacache.ts. */
  luaCache?: () => Promise<string>;
  /**
   * lualatex reads under openin_any=r instead of p. The luaotfload of TeX Live 2024 opens
   * ScriptExtensions.txt by the absolute path kpathsea found, and that kpathsea refuses absolute
   * paths under p (every lualatex job failed at load); TeX Live 2026's accepts a path in its
   * own trees. Inside the sandbox an absolute path reaches only the image, the job's folder and
   * its private /tmp.
   */
  luaReadsByPath?: boolean;
  /** Keep a started sandbox ready for the next job (default true). */
  warm?: boolean;
  /**
   * Run lualatex with LUA_INIT (default true). Only tests turn it off, to attack the
   * host-side reads with the links and renames a document could make without it.
   */
  hardenLua?: boolean;
  /** Start each warm sandbox's likely engine ahead of time (default true; needs `warm`). */
  warmEngines?: boolean;
  /** A job running longer drops to the lowest CPU priority (see demote.ts); 0 or none: never. */
  demoteAfterMs?: number;
}

/** Inside the sandbox /tmp is private to the job; TeX's variable trees live there. */
const TEX_ENV: Record<string, string> = {
  openin_any: 'p',
  openout_any: 'p',
  shell_escape: 'p',
  max_print_line: '10000',
  error_line: '254',
  half_error_line: '238',
  LC_ALL: 'C.UTF-8',
  TEXMFVAR: '/tmp/texmf-var',
  TEXMFCACHE: '/tmp/texmf-var',
  TEXMFHOME: '/tmp/texmf',
};

/** Without the sandbox there is no private /tmp: TeX's variable tree goes into the workspace. */
const HOST_TEXMFVAR = '.texmf-var';

export class SandboxPool {
  private luaCache: Promise<string | undefined> | null = null;
  private luaCacheDir: string | undefined;
  /** The inflated formats, once prepared (none: the engines load TeX Live's own). */
  private formats: Formats | undefined;
  private rootReady: Promise<string[]> | null = null;
  /** Set while the formats are prepared again (formatsThere). */
  private reprepare: Promise<void> | null = null;
  /** This process's folder under the work root, holding its workspaces. */
  private folder: string | undefined;
  /** Set while this pool holds the folder (see sweep.ts leaveOwnerFolder): from start, or a job after close, to close. */
  private holding: Promise<void> | null = null;
  /** A warm sandbox per uid, started when the previous job on that uid ended. */
  private readonly spare = new Map<string, Promise<Session>>();
  /** The engine of each uid's last job: its next sandbox starts that engine ahead of time. */
  private readonly likely = new Map<string, Compiler>();
  private closed = false;
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly options: PoolOptions) {}

  /**
   * Prepares the work root and sweeps the workspaces of services that died (customer source)
   * before any job runs; resolves to the swept folders. The server calls it when it starts
   * serving; the first sandbox calls it otherwise. Runs once.
   */
  start(): Promise<string[]> {
    this.rootReady ??= (async () => {
      // Job uids must traverse the root (0711) but not list it; each workspace is 0700 and theirs.
      // A root another user made or may write to is refused (sweep.ts).
      await claimWorkRoot(this.options.workRoot);
      const swept = [...(await sweepWorkRoot(this.options.workRoot)), ...(await sweepLaunchFolders())];
      await this.hold();
      this.formats = await this.options.formats?.().catch(() => undefined);
      return swept;
    })();
    return this.rootReady;
  }

  /**
   * Ends the warm sandboxes, waits for the sandboxes of ended jobs to be torn down, then
   * leaves this process's folder (the last pool to close removes it). Called once the last job
   * has ended (service shutdown).
   */
  async close(): Promise<void> {
    this.closed = true;
    const spares = [...this.spare.values()];
    this.spare.clear();
    // Waited for until none of their processes is left (bwrap's init can outlive the outer
    // bwrap by a moment): after close, nothing of the pool runs.
    await Promise.all([...spares.map((s) => s.then((session) => session.close(true)).catch(() => {})), ...this.closing]);
    await this.rootReady?.catch(() => {});
    const holding = this.holding;
    this.holding = null;
    if (holding && (await holding.then(() => true, () => false))) await leaveOwnerFolder(this.folder!).catch(() => {});
  }

  /** Holds this process's folder (made again for a job that still runs after close). */
  private hold(): Promise<void> {
    this.holding ??= ownerFolder(this.options.workRoot).then((folder) => {
      this.folder = folder;
    });
    return this.holding;
  }

  /**
   * Prepares the formats again when their folder has gone, and ends the warm sandboxes that
   * mounted it (their engines would find no format). A build of the service older than the
   * formats folders' use marks (formats.ts) removes another build's folder, as may a cleaner of
   * /tmp; a sandbox cannot mount a folder that is not there ("bwrap: Can't find source path").
   */
  private async formatsThere(): Promise<void> {
    if (!this.formats || existsSync(this.formats.dir)) return;
    this.reprepare ??= (async () => {
      const spares = [...this.spare.values()];
      this.spare.clear();
      for (const spare of spares) void spare.then((session) => this.discard(session, false)).catch(() => {});
      this.formats = await this.options.formats?.().catch(() => undefined);
    })().finally(() => (this.reprepare = null));
    await this.reprepare;
  }

  /** The sandbox for a job of `compiler` on `uid`: the uid's warm one when it suits, otherwise a new one. */
  async take(uid: number | undefined, compiler: Compiler): Promise<Session> {
    this.likely.set(String(uid), compiler);
    await this.formatsThere();
    const lua = compiler === 'lualatex';
    if (lua) await this.preparedLuaCache();
    const spare = this.spare.get(String(uid));
    this.spare.delete(String(uid));
    const session = await spare?.catch(() => undefined);
    const usable = session?.alive && (!lua || session.luaCache !== undefined || !this.luaCacheDir);
    if (session && usable) return session;
    if (session) await session.close();
    return this.open(uid);
  }

  /**
   * Ends a job's sandbox and starts the uid's next. A finished job's is torn down off the
   * caller's path (the next waits for it); a stopped job's (`stopped`) is gone, every process
   * of it, when the returned promise resolves.
   */
  release(session: Session, uid: number | undefined, stopped: boolean): Promise<void> {
    const closing = session.close(stopped).catch(() => {});
    this.closing.add(closing);
    void closing.then(() => this.closing.delete(closing));
    if (!this.closed && this.options.warm !== false) {
      const spare = this.open(uid, closing, this.warmEngine(uid));
      spare.catch(() => {});
      this.spare.set(String(uid), spare);
    }
    return stopped ? closing : Promise.resolve();
  }

  /**
   * Ends a sandbox that was not the uid's warm one (a paused preamble's, see paused-cache.ts):
   * the uid's next warm sandbox is already there, so none is started.
   */
  discard(session: Session, stopped: boolean): Promise<void> {
    const closing = session.close(stopped).catch(() => {});
    this.closing.add(closing);
    void closing.then(() => this.closing.delete(closing));
    return stopped ? closing : Promise.resolve();
  }

  /** A new sandbox on `uid` for `compiler` (lualatex's font cache prepared first), no engine started. */
  async openFor(uid: number | undefined, compiler: Compiler): Promise<Session> {
    if (compiler === 'lualatex') await this.preparedLuaCache();
    return this.open(uid);
  }

  /** A new sandbox on `uid` (after `after`), with `engine` started ahead of time when given. */
  open(uid: number | undefined, after?: Promise<void>, engine?: Compiler): Promise<Session> {
    return Promise.all([this.start(), after]).then(async () => {
      await this.hold();
      await this.formatsThere();
      const session = await Session.open(this.folder!, uid, {
        isolate: this.options.isolate,
        root: this.options.root,
        env: this.options.isolate ? TEX_ENV : { ...TEX_ENV, TEXMFVAR: HOST_TEXMFVAR, TEXMFCACHE: HOST_TEXMFVAR, TEXMFHOME: '.texmf' },
        ...(this.luaCacheDir ? { luaCache: this.luaCacheDir } : {}),
        ...(this.formats ? { formats: this.formats.dir } : {}),
      });
      if (engine) {
        const pdf = this.warmPdf(engine);
        const argv = warmEngineArgs(engine, this.fmt(session, engine), pdf !== undefined, this.coreMap(session, engine));
        await session.startEngine(engine, this.command(session, argv), pdf && this.command(session, pdf));
      }
      return session;
    });
  }

  /**
   * `argv` with LD_PRELOAD of kpathsea's linear-time file database (kpse-hash.ts) set on it
   * alone (through `env`) when the formats hold the library and `argv` runs one of its users:
   * only they and what they start load it, never the sandbox's shell, biber, qpdf or
   * Ghostscript. A `sh -c '… exec "$@"' sh <program> …` wrapper gets it on the program it runs.
   */
  private preloaded(argv: string[]): string[] {
    if (!this.formats?.kpseHash) return argv;
    const at = argv[0] === 'sh' && argv[1] === '-c' ? 4 : 0;
    const program = argv[at];
    if (program === undefined || !KPATHSEA_USERS.has(program)) return argv;
    return [...argv.slice(0, at), 'env', `LD_PRELOAD=${preloadPath(this.formats.dir, this.options.isolate)}`, ...argv.slice(at)];
  }

  /** The warm xdvipdfmx beside an xelatex engine; in the sandbox only, whose /tmp holds its FIFOs. */
  warmPdf(compiler: Compiler): string[] | undefined {
    return compiler === 'xelatex' && this.options.isolate ? WARM_XDVIPDFMX : undefined;
  }

  /** `-fmt` for the inflated format of `compiler`, as the session sees it (none when not prepared). */
  fmt(session: Session, compiler: Compiler): string[] {
    if (!session.formats || !this.formats?.compilers.has(compiler)) return [];
    // -progname keeps kpathsea's search paths (and the recorder's file) those of the usual command.
    return [`-fmt=${this.options.isolate ? SANDBOX_FORMATS : session.formats}/${compiler}`, `-progname=${compiler}`];
  }

  /**
   * The core font map as the session sees it, which its warm `compiler` reads instead of
   * pdftex.map (font-map.ts): pdflatex only, on its inflated base format. None when there is no core map.
   */
  coreMap(session: Session, compiler: Compiler): string | undefined {
    if (compiler !== 'pdflatex' || !this.formats?.fontMaps || this.fmt(session, compiler).length === 0) return undefined;
    const path = `${this.options.isolate ? SANDBOX_FORMATS : session.formats}/${CORE_MAP}`;
    // The path goes into TeX's \pdfmapfile{}: plain characters only.
    return /^[A-Za-z0-9_/.-]+$/.test(path) ? path : undefined;
  }

  /** The font maps of the core map (font-map.ts), to check a pass that read it. */
  get fontMaps(): FontMaps | undefined {
    return this.formats?.fontMaps;
  }

  /**
   * `argv` as the session runs it, under `limits`. Without them (a warm engine), CPU time and
   * file size stay as the sandbox's (unlimited) until the job's first pass lowers them:
   * raising a limit needs a privilege the sandbox does not have, and lowering it twice would
   * race with this prlimit.
   */
  command(session: Session, argv: string[], limits?: ProcessLimits): string[] {
    const limited = [
      ...(limits ? prlimit(limits) : ['prlimit', `--as=${MEMORY_BYTES}`, `--nproc=${PROCESSES}`, '--core=0', '--']),
      ...(argv[0] === 'lualatex' && this.options.luaReadsByPath ? ['env', 'openin_any=r'] : []),
      ...this.preloaded(argv),
    ];
    if (argv[0] !== 'lualatex' || session.luaCache === undefined) return limited;
    // luaotfload needs a writable cache: the job starts from a copy of the prepared one.
    const target = this.options.isolate ? TEX_ENV.TEXMFVAR! : HOST_TEXMFVAR;
    return ['sh', '-c', 'test -d "$1" || cp -r "$0" "$1"; shift; exec "$@"', session.luaCache, target, ...limited];
  }

  /** The prepared font cache, or undefined when it cannot be built (lualatex then builds its own). */
  private preparedLuaCache(): Promise<string | undefined> {
    this.luaCache ??= (this.options.luaCache ? this.options.luaCache().catch(() => undefined) : Promise.resolve(undefined)).then(
      (dir) => (this.luaCacheDir = dir),
    );
    return this.luaCache;
  }

  /**
   * The engine a uid's next sandbox starts ahead of time: its last job's (pdflatex first).
   * lualatex only when its hardening runs and its font cache is ready: a warm engine must
   * start exactly as the cold one would.
   */
  private warmEngine(uid: number | undefined): Compiler | undefined {
    if (this.options.warmEngines === false) return undefined;
    const engine = this.likely.get(String(uid)) ?? 'pdflatex';
    if (engine === 'lualatex' && (this.options.hardenLua === false || this.luaCache === null)) return 'pdflatex';
    return engine;
  }
}
