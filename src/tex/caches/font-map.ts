// pdfTeX's core font map. pdfTeX reads its whole font map (pdftex.map: 46,000 lines, 5.6 MB in
// TeX Live 2026) before the first page goes out: about 130 ms of CPU, half of a warm one-pager's.
// A warm engine does it ahead of time, but a saturated machine pays it all the same. So warm
// pdflatex engines read a core map instead: the entries of the map files most documents draw
// on (Computer Modern, Latin Modern, the AMS and base-35 fonts, the common text and icon
// families), about a tenth of the whole. Since a map only decides how a used font is embedded,
// a pass with the core map writes the PDF the whole map would, unless it loads a font the whole
// map has and the core does not: the recorder's file (.fls) lists every font metric (.tfm) a
// pass opens, virtual fonts' base fonts included, so the runner checks it and runs such a job
// again, cold, with the whole map (runner.ts). A format's own fonts are Computer Modern, in the core.

/** The core map's file name, beside the inflated formats (formats.ts) that every sandbox mounts. */
export const CORE_MAP = 'quire-core.map';

/** The map files (as pdftex.map names its sections) whose entries make the core map. */
export const CORE_MAP_FILES: readonly string[] = [
  // Computer Modern, its T1/TS1 (cm-super) and extra fonts; Latin Modern; AMS symbols and Euler.
  'cm.map', 'cmextra.map', 'cm-super-minimal-t1.map', 'cm-super-extended-t1.map', 'cm-super-minimal-ts1.map', 'cm-super-extended-ts1.map',
  'lm.map', 'symbols.map', 'euler.map',
  // The base 35 PostScript fonts (times, helvetica, courier, palatino, …: mathptmx, IEEEtran) and TeX Gyre.
  'ps2pk35.map', 'qtm.map', 'qhv.map', 'qpl.map', 'qcr.map', 'qbk.map', 'qag.map', 'qcs.map', 'qzc.map',
  // Text and math families of papers and theses: newtx/newpx (lncs, elsarticle), txfonts, libertine (acmart), inconsolata.
  'newtx.map', 'newtxtt.map', 'newtxsf.map', 'newpx.map', 'txfonts.map', 'pxfonts.map', 'libertine.map', 'libertinust1math.map', 'zi4.map',
  'pazo.map', 'mathpple.map', 'fourier.map', 'utopia.map', 'charter.map', 'bera.map', 'kpfonts.map', 'stix.map', 'stix2.map',
  'MnSymbol.map', 'clm.map',
  // Sans families of CVs and slides (AltaCV: Lato and Roboto Slab).
  'lato.map', 'roboto.map', 'fira.map', 'SourceSansThree.map',
  // Symbols: icons of CVs, stmaryrd, wasy, rsfs, esint, marvosym, bbm, dsfont, tipa, mathabx.
  'fontawesome.map', 'fontawesome5.map', 'fontawesome6.map', 'fontawesome7.map', 'academicons.map', 'ccicons.map', 'simpleicons.map',
  'stmaryrd.map', 'wasy.map', 'rsfs.map', 'esint.map', 'marvosym.map', 'bbold.map', 'dstroke.map', 'tipa.map', 'mathabx.map', 'eurosym.map', 'mflogo.map', 'xypic.map',
];

/** The first field of a map line: the TeX font (.tfm) it is for; null for comments and blanks. */
function fontOf(line: string): string | null {
  const name = /^\s*([^\s%]\S*)/.exec(line)?.[1];
  return name ?? null;
}

/** A font map split into its core and the rest: what the core map file holds, and who is where. */
export class FontMaps {
  private constructor(
    /** The core map's text (pdftex.map's lines for CORE_MAP_FILES, in order). */
    readonly core: string,
    private readonly coreFonts: ReadonlySet<string>,
    private readonly allFonts: ReadonlySet<string>,
  ) {}

  /** Splits `pdftexMap` (updmap's pdftex.map, whose `% <file>.map` lines head each map file's entries). */
  static split(pdftexMap: string, files: readonly string[] = CORE_MAP_FILES): FontMaps {
    const wanted = new Set(files);
    const entries: Array<[string, string]> = [];
    const allFonts = new Set<string>();
    const outside = new Set<string>();
    let section = '';
    for (const line of pdftexMap.split('\n')) {
      const header = /^% (\S+\.map)$/.exec(line);
      if (header) {
        section = header[1]!;
        continue;
      }
      const font = fontOf(line);
      if (font === null) continue;
      allFonts.add(font);
      if (wanted.has(section)) entries.push([font, line]);
      else outside.add(font);
    }
    // updmap keeps one entry per font; should a font have one outside the core too, the whole map decides it.
    const core = entries.filter(([font]) => !outside.has(font));
    return new FontMaps(`${core.map(([, line]) => line).join('\n')}\n`, new Set(core.map(([font]) => font)), allFonts);
  }

  /** Fonts in the core map. */
  get coreSize(): number {
    return this.coreFonts.size;
  }

  /**
   * Whether a pass whose recorder file is `fls` may have written another PDF with the whole
   * map: it opened the metrics of a font the whole map has and the core does not.
   */
  needsWholeMap(fls: string): boolean {
    for (const match of fls.matchAll(/^INPUT (?:.*\/)?([^/\n]+)\.tfm$/gm)) {
      const font = match[1]!;
      if (this.allFonts.has(font) && !this.coreFonts.has(font)) return true;
    }
    return false;
  }
}
