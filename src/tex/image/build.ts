// Builds one TeX image: a Debian root made by debootstrap (minbase) plus that release's TeX
// Live, its fonts repaired (fonts.ts), verified, then renamed into place. An image of a recent
// recipe (UPGRADE_FROM) is copied and brought up to date instead of debootstrapped anew. Each
// finished step leaves a stamp in the build folder and downloaded .debs stay in a cache, so a
// build cut short resumes where it stopped; a lock keeps two setups from building one image.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from './lock.js';
import { Progress, type ProgressSink } from './progress.js';
import { repairFonts } from './fonts.js';
import { extraPackages, parsePackageRecords, suiteHas, RECIPE, RELEASES, texlivePackages, UPGRADE_FROM, type TexliveYear } from './releases.js';
import { buildDir, debCache, imageRoot, lockPath, MARKER, readImage, type ImageInfo, type TexImage } from './store.js';
import { ENGINE_BINARIES, packageVersion, verifyImage } from './verify.js';

export interface BuildOptions {
  mirror?: string;
  sink?: ProgressSink;
}

/** The steps in order, each with its share of the whole build's time (percent). */
export const STEPS = [
  ['debootstrap', 5],
  ['configure', 2],
  ['download', 28],
  ['install', 55],
  ['fonts', 2],
  ['verify', 8],
] as const;
export type Step = (typeof STEPS)[number][0];

/** Whole-build percent when `step` is `within` (0..1) done. */
export function overallPercent(step: Step, within: number): number {
  let before = 0;
  for (const [name, share] of STEPS) {
    if (name === step) return before + share * Math.max(0, Math.min(1, within));
    before += share;
  }
  return 100;
}

/** The steps still to run, given the stamps a previous (interrupted) build left. */
export function pendingSteps(done: ReadonlySet<string>): Step[] {
  const pending: Step[] = [];
  for (const [name] of STEPS) if (pending.length > 0 || !done.has(name)) pending.push(name);
  return pending;
}

/** Files written into the root before TeX Live: no docs or man pages, no recommends. */
const DPKG_NODOC = `path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
`;
// The archive snapshot's Release files carry a Valid-Until in the past.
const APT_CONF = `APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
`;
/** Mount points the sandbox binds (tex/sandbox/sandbox.ts); the image's root is read-only there. */
const MOUNT_POINTS = ['job', 'texmf-ro', 'texmf-fmt'];

/** Returns the ready image for `year`, building it first when there is none. Needs root. */
export async function ensureImage(dir: string, year: TexliveYear, options: BuildOptions = {}): Promise<TexImage> {
  const current = (image: TexImage | null) => (image && (image.recipe ?? 1) >= RECIPE ? image : null);
  const ready = current(readImage(dir, year));
  if (ready) return ready;
  if (process.getuid?.() !== 0) {
    throw new Error(`building the TeX Live ${year} image needs root (debootstrap); run scripts/setup.sh as root once, or point QUIRE_TEXLIVE_DIR at built images`);
  }
  await mkdir(dir, { recursive: true });
  const sink = options.sink ?? process.stderr;
  const release = await acquireLock(lockPath(dir, year), {
    onWait: (pid) => sink.write(`quire texlive ${year}: another setup (pid ${pid}) is building this image; waiting\n`),
  });
  try {
    const stale = readImage(dir, year);
    if (stale) sink.write(`quire texlive ${year}: the image was made by an older recipe (${stale.recipe ?? 1} < ${RECIPE}); rebuilding it, the old one serves until then\n`);
    return current(readImage(dir, year)) ?? (await build(dir, year, options.mirror ?? 'http://deb.debian.org/debian', new Progress(year, sink)));
  } finally {
    await release();
  }
}

async function build(dir: string, year: TexliveYear, mirror: string, progress: Progress): Promise<TexImage> {
  const started = Date.now();
  const work = buildDir(dir, year);
  const root = join(work, 'root');
  const stamps = join(work, 'stamps');
  const debs = debCache(dir, year);
  await mkdir(stamps, { recursive: true });
  await mkdir(join(debs, 'partial'), { recursive: true });
  const log = createWriteStream(join(work, 'build.log'), { flags: 'a' });
  const done = new Set<string>();
  for (const [name] of STEPS) if (existsSync(join(stamps, name))) done.add(name);
  const { suite, script } = RELEASES[year];
  const inRoot = (argv: string[], onStatus?: (line: string) => void) => runLogged(chrootArgs(root, debs, argv), log, onStatus);
  const packagesFile = join(work, 'packages.txt');
  let info: Omit<ImageInfo, 'builtAt' | 'buildSeconds' | 'bytes'> | null = null;
  try {
    for (const step of pendingSteps(done)) {
      progress.update(step, overallPercent(step, 0));
      if (step === 'debootstrap') {
        // A half-made root is not worth repairing: debootstrap again, from the cached .debs.
        await rm(root, { recursive: true, force: true });
        const old = readImage(dir, year);
        if (old && (old.recipe ?? 1) >= UPGRADE_FROM) {
          // An image of a recent recipe is the start: the steps after this one install only what is new.
          await runLogged(['cp', '-a', '--reflink=auto', old.root, root], log);
        } else {
          await runLogged(['debootstrap', '--variant=minbase', `--cache-dir=${debs}`, suite, root, mirror, `/usr/share/debootstrap/scripts/${script}`], log);
        }
      } else if (step === 'configure') {
        await configureRoot(root, mirror, suite, inRoot, (argv) => capture(chrootArgs(root, debs, argv)), packagesFile);
      } else if (step === 'download' || step === 'install') {
        await installPackages(step, inRoot, packagesFile, suite, progress);
      } else if (step === 'fonts') {
        await repairFonts(root, (text) => capture(chrootArgs(root, debs, ['sh', '-c', text])), (line) => log.write(`fonts: ${line}\n`));
        await addTexFontsToFontconfig(root, inRoot);
      } else {
        info = await verifyImage(root, year, suite);
      }
      await writeFile(join(stamps, step), new Date().toISOString());
    }
    info ??= await verifyImage(root, year, suite);
    // Package lists are only needed to build (a resumed build reads them again).
    await rm(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
    await mkdir(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
    const bytes = Number((await capture(['du', '-sb', root])).split('\t')[0]) || 0;
    // Build time of this run (a resumed build counts from where it resumed).
    const full: ImageInfo = { ...info, builtAt: new Date().toISOString(), buildSeconds: Math.round((Date.now() - started) / 1000), bytes, recipe: RECIPE };
    await writeFile(join(root, MARKER), JSON.stringify(full, null, 2) + '\n');
    // An older recipe's image steps aside only now, and is deleted once the new one is in place.
    const old = join(work, 'old');
    const replaced = existsSync(imageRoot(dir, year));
    if (replaced) await rename(imageRoot(dir, year), old);
    await rename(root, imageRoot(dir, year));
    if (replaced) await rm(old, { recursive: true, force: true });
    progress.done(`ready, ${(bytes / 1e9).toFixed(1)} GB`);
    await rm(work, { recursive: true, force: true });
    await rm(join(debs, '..'), { recursive: true, force: true });
    return { ...full, root: imageRoot(dir, year) };
  } finally {
    log.end();
  }
}

type Exec = (argv: string[], onStatus?: (line: string) => void) => Promise<void>;

/**
 * Makes TeX Live's own OpenType and TrueType fonts (Raleway, EB Garamond, Font Awesome, … in
 * texlive-fonts-extra) known to fontconfig, so xelatex finds them by family name as it finds
 * system fonts; then rebuilds the font cache the sandbox reads. Web fonts (WOFF, WOFF2: Debian's
 * Font Awesome ships them beside its OTF) are left out: xdvipdfmx cannot embed them, and a
 * family found there first stopped every xelatex document that asked for it.
 */
async function addTexFontsToFontconfig(root: string, exec: Exec) {
  const dirs = ['opentype', 'truetype'].map((kind) => `  <dir>/usr/share/texlive/texmf-dist/fonts/${kind}</dir>`).join('\n');
  // Cantarell-VF.otf (CFF2 variable): xdvipdfmx cannot embed it; the static instances made from it (fonts.ts) serve the family.
  const reject = ['*.woff', '*.woff2', '/usr/share/fonts/woff/*', '/usr/share/fonts/opentype/cantarell/Cantarell-VF.otf'].map((glob) => `    <glob>${glob}</glob>`).join('\n');
  const conf = `${dirs}\n  <selectfont>\n   <rejectfont>\n${reject}\n   </rejectfont>\n  </selectfont>`;
  await writeFile(join(root, 'etc/fonts/conf.d/09-quire-texlive-fonts.conf'), `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n${conf}\n</fontconfig>\n`);
  await exec(['fc-cache', '-s', '-f']);
}

/** Apt and dpkg settings, mount points, and the package list (written to `packagesFile`). */
async function configureRoot(root: string, mirror: string, suite: string, exec: Exec, read: (argv: string[]) => Promise<string>, packagesFile: string) {
  await writeFile(join(root, 'etc/dpkg/dpkg.cfg.d/01-quire-nodoc'), DPKG_NODOC);
  await writeFile(join(root, 'etc/apt/apt.conf.d/01-quire'), APT_CONF);
  await writeFile(join(root, 'etc/apt/sources.list'), `deb ${mirror} ${suite} main\n`);
  for (const point of MOUNT_POINTS) await mkdir(join(root, point), { recursive: true });
  await rm(join(root, 'usr/share/doc'), { recursive: true, force: true });
  await rm(join(root, 'usr/share/man'), { recursive: true, force: true });
  // update-alternatives (Java's postinst) links man pages into man1 even when dpkg leaves them out.
  await mkdir(join(root, 'usr/share/man/man1'), { recursive: true });
  await exec(['apt-get', 'update']);
  const names = (await read(['apt-cache', 'pkgnames', 'texlive'])).split('\n').filter(Boolean);
  const records = parsePackageRecords(await read(['apt-cache', 'show', '--no-all-versions', ...names]));
  await writeFile(packagesFile, [...texlivePackages(records), ...extraPackages(suite)].join('\n') + '\n');
}

/** apt-get install of the package list: downloads only, or installs; apt's status feeds the percent. */
async function installPackages(step: 'download' | 'install', exec: Exec, packagesFile: string, suite: string, progress: Progress) {
  // A list an earlier Quire wrote (a resumed build) may name a package the suite lacks.
  const packages = (await readFile(packagesFile, 'utf8')).split('\n').filter((name) => name && suiteHas(suite, name));
  const kind = step === 'download' ? 'dlstatus' : 'pmstatus';
  const onStatus = (line: string) => {
    const [type, , percent] = line.split(':');
    if (type === kind) progress.update(step, overallPercent(step, Number(percent) / 100));
  };
  // A resumed build may find the package lists gone or old.
  if (step === 'download') await exec(['apt-get', 'update']);
  if (step === 'install') await exec(['dpkg', '--configure', '-a']);
  const only = step === 'download' ? ['--download-only'] : [];
  await exec(['apt-get', 'install', '-y', '-q', '-o', 'APT::Status-Fd=3', ...only, ...packages], onStatus);
}

/**
 * The container's way (Dockerfile): turns the Debian root this process runs in into the TeX
 * image of `year`, with the same settings and packages as a built image. The sandbox cannot
 * run inside a container build, so the marker records versions read directly and the image is
 * verified by compiling through the running container (scripts/container.sh).
 */
export async function installHere(year: TexliveYear, mirror = 'http://deb.debian.org/debian', sink: ProgressSink = process.stderr): Promise<void> {
  const started = Date.now();
  const progress = new Progress(year, sink);
  const work = await mkdtemp(join(tmpdir(), 'quire-here-'));
  const log = createWriteStream(join(work, 'build.log'));
  const exec: Exec = (argv, onStatus) => runLogged(['env', 'DEBIAN_FRONTEND=noninteractive', ...argv], log, onStatus);
  try {
    progress.update('configure', overallPercent('configure', 0));
    await configureRoot('/', mirror, RELEASES[year].suite, exec, (argv) => capture(argv), join(work, 'packages.txt'));
    await installPackages('install', exec, join(work, 'packages.txt'), RELEASES[year].suite, progress);
    await repairFonts('/', (text) => capture(['sh', '-c', text]), (line) => log.write(`fonts: ${line}\n`));
    await addTexFontsToFontconfig('/', exec);
    await exec(['apt-get', 'clean']);
    await rm('/var/lib/apt/lists', { recursive: true, force: true });
    const engines: Record<string, string> = {};
    for (const [engine, binary] of Object.entries(ENGINE_BINARIES)) engines[engine] = (await capture([binary, '--version'])).split('\n')[0]!.trim();
    const info: ImageInfo = {
      year,
      suite: RELEASES[year].suite,
      texliveVersion: await packageVersion('/', 'texlive-base'),
      engines,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
      bytes: 0,
      recipe: RECIPE,
    };
    await writeFile(join('/', MARKER), JSON.stringify(info, null, 2) + '\n');
    progress.done('installed in this root');
  } finally {
    log.end();
    await rm(work, { recursive: true, force: true });
  }
}

/** Runs `argv` as root inside the image root (bubblewrap, network on), the .deb cache bound in. */
function chrootArgs(root: string, debs: string, argv: string[]): string[] {
  return [
    'bwrap', '--bind', root, '/', '--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp',
    '--bind', debs, '/var/cache/apt/archives', '--ro-bind', '/etc/resolv.conf', '/etc/resolv.conf',
    '--cap-add', 'ALL', '--clearenv',
    '--setenv', 'PATH', '/usr/sbin:/usr/bin:/sbin:/bin', '--setenv', 'HOME', '/root',
    '--setenv', 'DEBIAN_FRONTEND', 'noninteractive', '--setenv', 'LC_ALL', 'C.UTF-8', '--', ...argv,
  ];
}

function runLogged(argv: string[], log: WriteStream, onStatus?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const keep = (chunk: Buffer) => {
      log.write(chunk);
      tail.push(...chunk.toString().split('\n').filter(Boolean));
      tail.splice(0, Math.max(0, tail.length - 20));
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let pending = '';
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onStatus?.(line);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.slice(argv.indexOf('--') + 1).slice(0, 3).join(' ')} failed (exit ${code}):\n${tail.join('\n')}`))));
  });
}

function capture(argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.join(' ').slice(0, 200)}: ${err.trim()}`))));
  });
}
