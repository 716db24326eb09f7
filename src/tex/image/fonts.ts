// Fonts as TeX Live ships them (issue 39): Debian replaces some of TeX Live's font files with
// links into its own fonts-* packages, and leaves a few files out. This module finds links
// under the TeX trees that point nowhere (resolved inside the image, never on the host), and
// the font files the enabled .map files name that kpsewhich cannot find; the build repairs
// what it can and fails, naming each file, on what it cannot.
import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** The trees TeX reads fonts from (TEXMFDIST, TEXMFMAIN/TEXMFLOCAL's Debian siblings). */
export const TEX_TREES = ['usr/share/texlive', 'usr/share/texmf', 'usr/local/share/texmf'];

/**
 * Files TeX Live ships that Debian's fonts-* packages no longer have under the name the link
 * expects: Debian ships Cantarell only as a variable font, Cabin without its Medium and
 * SemiBold weights, and STIX Two instead of STIX 1 (the "stix-word" files). No Debian package
 * has these files, so the build removes the dangling links (a link that points nowhere makes
 * fontspec fail with "cannot open", where a missing file lets it fall back to fontconfig's
 * family, which finds the Debian font); every other dangling link fails the build. The
 * pdflatex side of these packages (Type 1 fonts, .map lines) is complete and checked.
 */
export const DEBIAN_LACKS: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  // Made again from the variable font right after (FROM_VARIABLE).
  { pattern: /\/cantarell\/Cantarell-(Regular|Bold|ExtraBold|Light|Thin)\.otf$/, why: 'Debian ships Cantarell only as Cantarell-VF.otf (variable)' },
  { pattern: /\/cabin\/Cabin-(Medium|MediumItalic|SemiBold|SemiBoldItalic)\.otf$/, why: 'Debian’s fonts-cabin has no Medium or SemiBold weight' },
  { pattern: /\/stix\/STIX(Math)?-(Regular|Bold|Italic|BoldItalic)\.otf$/, why: 'Debian’s fonts-stix is STIX Two; STIX 1 OpenType is not packaged' },
  // bookworm's links package (the 2022 image) points at fonts bookworm does not ship under those names.
  { pattern: /\/alegreya\/AlegreyaSans(SC)?-\w+\.otf$/, why: 'bookworm has no fonts-alegreya-sans (the 2022 image)' },
  { pattern: /\/junicode\/Junicod(e|e-Bold|e-It|e\.ttf)?$/, why: 'bookworm’s fonts-junicode 2 names its files otherwise (the 2022 image)' },
  // Not a font: pdfx's colour profile, in Debian's non-free icc-profiles (the image is main only).
  { pattern: /\/pdfx\/sRGB_IEC61966-2-1_black_scaled\.icc$/, why: 'in Debian’s non-free icc-profiles only' },
];

/**
 * Static fonts made from a variable font Debian ships in their place (fontTools' instancer, in
 * the image: python3-fonttools), where TeX Live has static files: xdvipdfmx cannot embed a CFF2
 * variable font, so xelatex needs the static ones (Cantarell's package and `\setmainfont{Cantarell}`).
 */
export const FROM_VARIABLE: ReadonlyArray<{ source: string; dir: string; axis: string; instances: Readonly<Record<string, number>> }> = [
  {
    source: '/usr/share/fonts/opentype/cantarell/Cantarell-VF.otf',
    dir: '/usr/share/texlive/texmf-dist/fonts/opentype/gnome/cantarell',
    axis: 'wght',
    instances: { 'Cantarell-Thin.otf': 100, 'Cantarell-Light.otf': 300, 'Cantarell-Regular.otf': 400, 'Cantarell-Bold.otf': 700, 'Cantarell-ExtraBold.otf': 800 },
  },
];

/**
 * Python run in the image: one static instance, CFF2 downgraded to CFF, named as TeX Live's file
 * (PostScript name = file stem). Every axis is pinned, so the instance is static without fontTools
 * 4.58's `static=True` (a check only), which trixie's 4.57 does not take. Before 4.58 the CFF2
 * downgrade keeps CID glyph names and saving fails (trixie, bookworm): it says so and makes nothing.
 */
const INSTANCE_PY = `import sys, fontTools
if tuple(int(p) for p in fontTools.version.split(".")[:2]) < (4, 58):
    print("fontTools " + fontTools.version + " is too old to make static CFF fonts")
    sys.exit(0)
from fontTools.ttLib import TTFont
from fontTools.varLib.instancer import instantiateVariableFont
src, out, axis, value = sys.argv[1:5]
font = instantiateVariableFont(TTFont(src), {axis: float(value)}, updateFontNames=True, downgradeCFF2=True)
name = out.rsplit("/", 1)[-1].rsplit(".", 1)[0]
font["name"].setName(name, 6, 3, 1, 0x409)
font["CFF "].cff.fontNames = [name]
font.save(out)
`;

export interface DanglingLink {
  /** Path of the link inside the image ("/usr/share/…"). */
  link: string;
  /** Where it points, resolved inside the image. */
  target: string;
}

/** `path` resolved inside `root` (symlinks in its parents and its own chain too), or null when it points nowhere. */
async function resolveInside(root: string, path: string, depth = 0): Promise<string | null> {
  if (depth > 16) return null;
  const parts = path.split('/').filter(Boolean);
  let at = '/';
  for (const part of parts) {
    const next = join(at, part);
    let info;
    try {
      info = await lstat(join(root, next));
    } catch {
      return null;
    }
    if (info.isSymbolicLink()) {
      const to = await readlink(join(root, next));
      const resolved = await resolveInside(root, isAbsolute(to) ? to : resolve(at, to), depth + 1);
      if (resolved === null) return null;
      at = resolved;
    } else at = next;
  }
  return at;
}

/** Every symlink under the TeX trees of `root` whose target does not exist inside `root` (what `find -xtype l` says, chrooted). */
export async function danglingLinks(root: string, trees: readonly string[] = TEX_TREES): Promise<DanglingLink[]> {
  const out: DanglingLink[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      // Documentation is left out of the image on purpose (dpkg path-exclude): its links may dangle.
      if (e.name === 'doc') continue;
      if (e.isDirectory()) await walk(path);
      else if (e.isSymbolicLink()) {
        const to = await readlink(join(root, path));
        const target = isAbsolute(to) ? to : resolve(dirname(path), to);
        if ((await resolveInside(root, target)) === null) out.push({ link: path, target });
      }
    }
  };
  for (const tree of trees) await walk(`/${tree}`);
  return out.sort((a, b) => a.link.localeCompare(b.link));
}

/**
 * Repairs what a name can repair: a link whose target's folder holds the file under another
 * capitalisation (Debian's OpenSans-SemiBold.ttf for TeX Live's OpenSans-Semibold.ttf) points
 * there; a link to a file listed in DEBIAN_LACKS is removed. Returns what was done and what is
 * left dangling (the build fails on those).
 */
export async function repairLinks(root: string, trees: readonly string[] = TEX_TREES): Promise<{ relinked: DanglingLink[]; removed: DanglingLink[]; left: DanglingLink[] }> {
  const relinked: DanglingLink[] = [];
  const removed: DanglingLink[] = [];
  const left: DanglingLink[] = [];
  for (const d of await danglingLinks(root, trees)) {
    const folder = dirname(d.target);
    const wanted = d.target.slice(folder.length + 1).toLowerCase();
    const real = await resolveInside(root, folder);
    const names = real ? await readdir(join(root, real)).catch(() => [] as string[]) : [];
    const match = names.find((name) => name.toLowerCase() === wanted);
    if (match && real) {
      await unlink(join(root, d.link));
      await symlink(relative(dirname(d.link), join(real, match)), join(root, d.link));
      relinked.push({ link: d.link, target: join(real, match) });
    } else if (DEBIAN_LACKS.some((lack) => lack.pattern.test(d.link))) {
      await unlink(join(root, d.link));
      removed.push(d);
    } else left.push(d);
  }
  return { relinked, removed, left };
}

/** The font and encoding files a .map text names (`<file`, `<<file`, `<[file`), once each. */
export function mapFontFiles(text: string): string[] {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (/^\s*[%#*;]/.test(line)) continue;
    for (const m of line.matchAll(/<[<[]?\s*([^\s"<[]+)/g)) if (m[1]) names.add(m[1]);
  }
  return [...names].sort();
}

/** The map pdftex reads, as updmap wrote it from every enabled .map file (Debian's place, then TeX Live's). */
export const PDFTEX_MAPS = ['var/lib/texmf/fonts/map/pdftex/updmap/pdftex.map', 'usr/share/texlive/texmf-dist/fonts/map/pdftex/updmap/pdftex.map'];

/** The font and encoding files pdftex.map names (what updmap wrote), or null when the image has no pdftex.map. */
export async function pdftexMapFiles(root: string): Promise<string[] | null> {
  for (const map of PDFTEX_MAPS) {
    const text = await readFile(join(root, map), 'utf8').catch(() => undefined);
    if (text !== undefined) return mapFontFiles(text);
  }
  return null;
}

/**
 * Those of `names` kpsewhich does not find in the image. The names go through a file
 * (`listOnHost`, seen as `listInImage` by `run`, which runs a shell script in the image):
 * 12,000 names are too long for one argument.
 */
export async function unfound(names: readonly string[], listOnHost: string, listInImage: string, run: (script: string) => Promise<string>): Promise<string[]> {
  await writeFile(listOnHost, names.join('\n') + '\n');
  // kpsewhich prints the path of each name it finds and exits 1 when one is not: xargs then says 123.
  // One name a line, taken as written: without -d, xargs reads quotes, and TeX Live 2022's
  // Baskervaldx.map names `Baskervaldx-Reg.pfb'''` (xargs stopped there: 11,504 names "unfound").
  const found = new Set((await run(`xargs -d '\\n' -n 500 kpsewhich < ${listInImage} || true`)).split('\n').map((line) => line.slice(line.lastIndexOf('/') + 1)));
  return names.filter((name) => !found.has(name));
}

/**
 * Map lines that name a TrueType or OpenType file the image lacks while its Type 1 twin (same
 * name, .pfb) is there (ClearSans.map names ClearSans-Regular.ttf, which Debian leaves out,
 * next to ClearSans-Regular.pfb, the same font): `text` with those names swapped.
 */
export function withTwins(text: string, twins: ReadonlyMap<string, string>): string {
  return text.replace(/<([<[]?)\s*([^\s"<[]+)/g, (all, how: string, name: string) => (twins.has(name) ? `<${how}${twins.get(name)}` : all));
}

/** What the font check found; `problems` empty means it passed. */
export interface FontCheck {
  dangling: DanglingLink[];
  mapFiles: number;
  missing: string[];
  problems: string[];
}

/** Judges the findings: every dangling link and every unfound mapped file is a problem, named. */
export function judgeFonts(dangling: DanglingLink[], mapFiles: number, missing: string[]): FontCheck {
  const problems = [
    ...(mapFiles === 0 ? ['pdftex.map (updmap’s output) is not in the image, or names no font'] : []),
    ...dangling.map((d) => `font link ${d.link} points to ${d.target}, which is not in the image`),
    ...missing.map((name) => `${name} is named by pdftex.map but kpsewhich does not find it`),
  ];
  return { dangling, mapFiles, missing, problems };
}

/** True when `path` (inside root) is a regular file or a link to one. */
export async function existsInside(root: string, path: string): Promise<boolean> {
  const at = await resolveInside(root, path);
  return at !== null && (await stat(join(root, at)).then((s) => s.isFile()).catch(() => false));
}

/**
 * The build's font repair, run on a finished install (`run` runs a shell script in the image):
 * links repaired or removed (repairLinks), then map lines that name a TrueType/OpenType file the
 * image lacks but whose Type 1 twin it has are pointed at the twin, in a copy of the map in
 * TEXMFLOCAL (it comes first in the search; TeX Live's own file stays as shipped), and updmap
 * writes pdftex.map again. `note` gets one line per change, for the build log.
 */
export async function repairFonts(root: string, run: (script: string) => Promise<string>, note: (line: string) => void): Promise<void> {
  const links = await repairLinks(root);
  for (const d of links.relinked) note(`font link ${d.link} now points to ${d.target}`);
  for (const d of links.removed) note(`font link ${d.link} removed: ${DEBIAN_LACKS.find((lack) => lack.pattern.test(d.link))?.why ?? ''}`);
  for (const variable of FROM_VARIABLE) {
    if (!(await existsInside(root, variable.source))) continue;
    for (const [file, value] of Object.entries(variable.instances)) {
      const out = join(variable.dir, file);
      if (await existsInside(root, out)) continue;
      const said = await run(`python3 -c '${INSTANCE_PY}' ${variable.source} ${out} ${variable.axis} ${value}`);
      if (/too old/.test(said)) {
        // An older suite's image (2024, 2022): the links were removed above, so none dangles; documents naming these files fail there.
        note(`${variable.dir}: no static instances of ${variable.source}: ${said.trim()}`);
        break;
      }
      note(`${out} made from ${variable.source} (${variable.axis}=${value})`);
    }
  }
  // ls-R lists what the links were: TeX's file search must see what is there now.
  await run('mktexlsr >/dev/null 2>&1');
  const list = 'var/tmp/quire-map-names.txt';
  const missing = await unfound((await pdftexMapFiles(root)) ?? [], join(root, list), `/${list}`, run);
  await unlink(join(root, list)).catch(() => undefined);
  const wanted = missing.filter((name) => /\.(ttf|otf)$/i.test(name));
  if (wanted.length === 0) return;
  const twin = (name: string) => name.replace(/\.(ttf|otf)$/i, '.pfb');
  const found = new Set((await run(`kpsewhich ${wanted.map(twin).join(' ')} || true`)).split('\n').map((line) => line.slice(line.lastIndexOf('/') + 1)));
  const twins = new Map(wanted.filter((name) => found.has(twin(name))).map((name) => [name, twin(name)] as const));
  if (twins.size === 0) return;
  const dist = '/usr/share/texlive/texmf-dist';
  const maps = (await run(`grep -rlF ${[...twins.keys()].map((n) => `-e '<${n}'`).join(' ')} ${dist}/fonts/map || true`)).split('\n').filter((path) => path.endsWith('.map'));
  for (const map of maps) {
    const local = join(root, 'usr/local/share/texmf', map.slice(dist.length));
    await mkdir(dirname(local), { recursive: true });
    const text = await readFile(join(root, map), 'utf8');
    await writeFile(local, withTwins(text, twins));
    const named = new Set(mapFontFiles(text));
    note(`${map.slice(map.lastIndexOf('/') + 1)}: ${[...twins].filter(([from]) => named.has(from)).map(([from, to]) => `${from} → ${to}`).join(', ')} (TEXMFLOCAL copy)`);
  }
  await run('mktexlsr /usr/local/share/texmf >/dev/null 2>&1 && updmap-sys --quiet >/dev/null 2>&1');
}
