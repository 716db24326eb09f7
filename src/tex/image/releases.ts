// Which Debian release carries which TeX Live year, and which of its packages an image holds:
// every TeX Live package except documentation and metapackages, plus the tools and fonts
// documents and the service call on.

/**
 * What an image is made of, as a number: raised whenever the package choice or the build steps
 * change, so that setup rebuilds an image an older Quire made (the old one serves until the new
 * one is ready and renamed in its place).
 */
export const RECIPE = 4;

/**
 * The oldest recipe whose image a rebuild may start from (a copy, then apt installs what is new
 * and the later steps run again) instead of from debootstrap: recipe 3 only added packages and
 * the font repair and check, recipe 4 only fonts-noto-cjk-extra.
 */
export const UPGRADE_FROM = 2;

export const TEXLIVE_YEARS = ['2026', '2024', '2022'] as const;
export type TexliveYear = (typeof TEXLIVE_YEARS)[number];

export function isTexliveYear(value: unknown): value is TexliveYear {
  return typeof value === 'string' && (TEXLIVE_YEARS as readonly string[]).includes(value);
}

export interface Release {
  /** Debian codename whose archive carries this TeX Live. */
  suite: string;
  /** debootstrap's script for the suite (a bookworm host's debootstrap predates forky). */
  script: string;
  /** EXTRA_PACKAGES the suite's archive does not have (apt refuses the whole list for one unknown name). */
  lacks?: readonly string[];
}

export const RELEASES: Record<TexliveYear, Release> = {
  '2026': { suite: 'forky', script: 'sid' },
  // fonts-ebgaramond-initials came with forky's TeX Live links; older suites have neither.
  '2024': { suite: 'trixie', script: 'trixie', lacks: ['fonts-ebgaramond-initials'] },
  '2022': { suite: 'bookworm', script: 'bookworm', lacks: ['fonts-ebgaramond-initials'] },
};

/** The suite's archive has the package, as far as RELEASES knows. */
export function suiteHas(suite: string, name: string): boolean {
  return !(Object.values(RELEASES).find((r) => r.suite === suite)?.lacks ?? []).includes(name);
}

/** The tools and fonts installed next to TeX Live in the image of `suite`. */
export function extraPackages(suite: string): string[] {
  return EXTRA_PACKAGES.filter((name) => suiteHas(suite, name));
}

/** Installed next to TeX Live: its helpers, the service's PDF tools, PDFBox Preflight, fonts. */
export const EXTRA_PACKAGES = [
  'biber',
  'latexmk',
  'chktex',
  'qpdf',
  'poppler-utils',
  'librsvg2-bin',
  'ghostscript',
  'fontconfig',
  'fonts-noto-core',
  'fonts-noto-cjk',
  // The CJK weights beyond Regular and Bold (Noto Serif CJK SC Light and the like): ctex's and
  // thuthesis's font sets on Linux name them.
  'fonts-noto-cjk-extra',
  'fonts-liberation2',
  'fonts-dejavu-core',
  'tex-gyre',
  // Not texlive-* packages, but recommended by them: cm-super's Type 1 EC fonts (without it
  // every T1-encoded document makes bitmap fonts with METAFONT), dvisvgm, ps2eps, feynmf, the
  // IPA Japanese fonts (pLaTeX's defaults) and the CJK package with its fonts.
  'cm-super',
  'dvisvgm',
  'ps2eps',
  'feynmf',
  'fonts-ipaexfont-gothic',
  'fonts-ipaexfont-mincho',
  'fonts-ipafont-gothic',
  'fonts-ipafont-mincho',
  'latex-cjk-all',
  // tex-gyre holds only the Type 1 fonts since trixie; the OpenType ones fontspec finds by name are here.
  'fonts-texgyre',
  'fonts-texgyre-math',
  // texlive-fonts-extra-links points EBGaramond-Initials.otf here (fonts.ts checks every such link).
  'fonts-ebgaramond-initials',
  // fontTools' instancer: static Cantarell from Debian's variable font, as TeX Live ships it (fonts.ts).
  'python3-fonttools',
  // A JDK, not only a JRE: the PDF/A-1b checker's small driver is compiled in the image (preflight-java.ts).
  'default-jdk-headless',
  'libpdfbox2-java',
];

export interface PackageRecord {
  name: string;
  section: string;
  /** Installed-Size in KiB. */
  installedKib: number;
}

/**
 * The texlive-* packages to install. Documentation (section doc, `-doc`) is left out, and so
 * are metapackages (texlive-full, texlive-lang-all, texlive): they only depend on the others
 * and install next to nothing themselves, which is how they are recognised.
 */
export function texlivePackages(records: PackageRecord[]): string[] {
  return records
    .filter((r) => r.name === 'texlive' || r.name.startsWith('texlive-'))
    .filter((r) => r.section !== 'doc' && !r.name.endsWith('-doc'))
    .filter((r) => r.installedKib >= 100)
    .map((r) => r.name)
    .sort();
}

/** Parses `apt-cache show --no-all-versions` output (stanzas separated by blank lines). */
export function parsePackageRecords(text: string): PackageRecord[] {
  return text
    .split(/\n\s*\n/)
    .map((stanza) => {
      const field = (name: string) => new RegExp(`^${name}: *(.*)$`, 'm').exec(stanza)?.[1]?.trim() ?? '';
      return { name: field('Package'), section: field('Section').split('/').pop() ?? '', installedKib: Number(field('Installed-Size')) || 0 };
    })
    .filter((r) => r.name !== '');
}
