// The TeX image of the lookups that run no job: the TeX Live index and fonts the diagnosis
// reads, the kpsewhich of validate's missing-package check, the templates the output step
// copies (Factur-X's pdfa.xmp, graphics.cfg for SVG assets), the one-off sandboxes of
// pdftotext, qpdf merges, chktex, conversions and the Preflight jar's build. Everything that
// runs a job (pool, runner, caches, sandboxes) is handed its image instead and never reads
// this. The service names it when it starts (the default year's image, none with
// QUIRE_SANDBOX=off); until then, so that tests and tools run TeX where the service would,
// it is the newest ready image of QUIRE_TEXLIVE (image/settings.ts).
import { imageSettings } from './settings.js';
import { installedImages } from './store.js';

/** null: not looked up yet. */
let chosen: string | undefined | null = null;

/** Set once by the service at start: the default year's image root, or none (the host's TeX Live). */
export function useDefaultImage(root: string | undefined): void {
  chosen = root;
}

export function defaultImageRoot(): string | undefined {
  if (chosen === null) {
    const { dir, years } = imageSettings();
    chosen = installedImages(dir).find((image) => years.includes(image.year))?.root;
  }
  return chosen;
}
