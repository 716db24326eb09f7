// How every TeX-side process starts: inside bubblewrap with no network, its own PID
// namespace, the TeX image its caller names (tex/image/; none: the host's TeX Live) bound
// read-only as its root, a read-only /dev, only the
// job's workspace and a capped /tmp writable, and nothing of the host visible; then prlimit
// caps CPU, memory, file size and processes.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSIDE_UID } from './uids.js';

/** Where the job's workspace appears inside the sandbox. */
export const SANDBOX_WORKDIR = '/job';
/** Where the prepared luaotfload cache appears inside the sandbox (read-only). */
export const SANDBOX_LUA_CACHE = '/texmf-ro';
/** Where the inflated formats (formats.ts) appear inside the sandbox (read-only). */
export const SANDBOX_FORMATS = '/texmf-fmt';

/** Read-only system paths (of the TeX image) TeX, its fonts and its helpers (biber, qpdf,
 * Ghostscript, Java for PDFBox Preflight) need; /etc/alternatives only holds symlinks (bibtex
 * is one) into /usr. */
const READ_ONLY = ['/usr', '/etc/alternatives', '/etc/texmf', '/etc/fonts', '/etc/chktexrc', '/etc/ghostscript', '/etc/papersize', '/etc/paperspecs', '/etc/libpaper.d', '/var/lib/texmf', '/var/lib/ghostscript', '/var/cache/fontconfig'];
/** The JVM's own configuration (jvm.cfg, java.security) that /usr links to: /etc/java-<N>-openjdk, N by release. */
const JAVA_CONFIG = /^java-\d+-openjdk$/;
const javaConfigs = new Map<string, string[]>();

function javaConfigPaths(root: string): string[] {
  let paths = javaConfigs.get(root);
  if (!paths) {
    try {
      paths = readdirSync(`${root}/etc`).filter((name) => JAVA_CONFIG.test(name)).map((name) => `/etc/${name}`);
    } catch {
      paths = [];
    }
    javaConfigs.set(root, paths);
  }
  return paths;
}
/** Debian 12 keeps these as symlinks into /usr. */
const SYMLINKS: Array<[string, string]> = [
  ['usr/bin', '/bin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
  ['usr/sbin', '/sbin'],
];

/**
 * TeX allocates and fills tens of megabytes of arrays as it loads a format, and on virtual
 * machines each 4 KB page fault is dear: with glibc's malloc backing its arenas with huge pages
 * (where the kernel's transparent huge pages are `madvise` or `always`) pdflatex, xelatex and
 * lualatex run a one-pager in about half the time (measured: 296 → 146–165 ms, 1078 → 518 ms,
 * 1163 → 625 ms). Memory limits still hold: they cap address space, which this does not grow.
 */
export const MALLOC_TUNABLES = { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' };
/** Where glibc looks for the kernel's huge-page settings (read-only in the sandbox; nothing else of /sys is). */
const THP_SETTINGS = '/sys/kernel/mm/transparent_hugepage';

export interface ProcessLimits {
  cpuSeconds: number;
  /** Largest single file a process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Address space per process (RLIMIT_AS). */
  memoryBytes: number;
  processes: number;
}

export interface SandboxSpec {
  /** Host directory mounted writable at SANDBOX_WORKDIR. */
  workspace: string;
  env: Record<string, string>;
  /** Applied with prlimit to the whole command; a session applies them per command instead. */
  limits?: ProcessLimits;
  /** Prepared lualatex font cache on the host, mounted read-only at SANDBOX_LUA_CACHE. */
  luaCache?: string;
  /** Inflated formats on the host, mounted read-only at SANDBOX_FORMATS. */
  formats?: string;
  /**
   * The TeX image's root folder (tex/image/store.ts), bound read-only as `/`; none: the host's
   * own TeX Live (a machine without images). Always named by the caller: no sandbox picks one.
   */
  root: string | undefined;
  /** false runs without bubblewrap (QUIRE_SANDBOX=off): limits still apply, isolation does not. */
  isolate: boolean;
  /** The unprivileged uid (and gid) it runs as, when the service is root (see sandboxUid); none: as the service. */
  uid?: number | undefined;
}

export interface Command {
  file: string;
  args: string[];
  /** Working directory for the spawn (only used without isolation). */
  cwd?: string;
  env?: Record<string, string>;
}

export function prlimit(limits: ProcessLimits): string[] {
  return [
    'prlimit',
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.fileBytes}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.processes}`,
    '--core=0',
    '--',
  ];
}

/** The command line that runs `argv` under the sandbox and limits of `spec`. */
export function sandboxed(spec: SandboxSpec, argv: string[]): Command {
  const limited = spec.limits ? [...prlimit(spec.limits), ...argv] : argv;
  if (!spec.isolate) {
    const env = { ...MALLOC_TUNABLES, ...spec.env, PATH: '/usr/bin:/bin', HOME: spec.workspace };
    return { file: limited[0]!, args: limited.slice(1), cwd: spec.workspace, env };
  }
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    String(INSIDE_UID),
    '--gid',
    String(INSIDE_UID),
    '--hostname',
    'quire',
  ];
  // From the TeX image (else the host): only what TeX and its helpers need, so not even the
  // image's generic /etc/passwd is there to read.
  const root = spec.root ?? '';
  for (const path of [...READ_ONLY, ...javaConfigPaths(root)]) args.push('--ro-bind-try', `${root}${path}`, path);
  // Only the transparent-huge-page settings of the host's /sys: glibc reads them before it uses huge pages (MALLOC_TUNABLES).
  args.push('--ro-bind-try', THP_SETTINGS, THP_SETTINGS);
  for (const [target, link] of SYMLINKS) args.push('--symlink', target, link);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(256 * 1024 * 1024), '--tmpfs', '/tmp');
  if (spec.luaCache !== undefined) args.push('--ro-bind', spec.luaCache, SANDBOX_LUA_CACHE);
  if (spec.formats !== undefined) args.push('--ro-bind', spec.formats, SANDBOX_FORMATS);
  args.push('--bind', spec.workspace, SANDBOX_WORKDIR, '--chdir', SANDBOX_WORKDIR, '--clearenv');
  // bwrap's root and /dev are tmpfs in host memory with no size cap: once everything is
  // mounted both become read-only (devices such as /dev/null still work), so /tmp (capped)
  // and the workspace (watched, RLIMIT_FSIZE per file) are the only writable places.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  const env = { PATH: '/usr/bin', HOME: '/tmp', ...MALLOC_TUNABLES, ...spec.env };
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  args.push('--', ...limited);
  return { file: 'bwrap', args };
}

/**
 * Runs a tiny real sandbox at start: the server refuses to start when bubblewrap cannot
 * isolate (unless the operator turned the sandbox off). Returns an error message or null.
 */
export function probeSandbox(uid: number | undefined, root: string | undefined): string | null {
  if (!existsSync('/usr/bin/bwrap')) return 'bubblewrap (bwrap) is not installed';
  const workspace = mkdtempSync(join(tmpdir(), 'quire-probe-'));
  chmodSync(workspace, 0o755);
  const { file, args } = sandboxed(
    {
      workspace,
      env: {},
      isolate: true,
      root,
      limits: { cpuSeconds: 5, fileBytes: 1 << 20, memoryBytes: 1 << 30, processes: 16 },
    },
    // No /etc/passwd (of the host or the image); with an image, its TeX is there.
    ['sh', '-c', root !== undefined ? 'test ! -e /etc/passwd && test -x /usr/bin/pdftex && echo sandbox-ok' : 'test ! -e /etc/passwd && echo sandbox-ok'],
  );
  const result = spawnSync(file, args, { encoding: 'utf8', timeout: 10_000, ...(uid !== undefined ? { uid, gid: uid } : {}) });
  rmSync(workspace, { recursive: true, force: true });
  if (result.stdout?.trim() === 'sandbox-ok') return null;
  return (result.stderr || result.error?.message || `exit ${result.status}`).trim().split('\n')[0] ?? 'unknown';
}
