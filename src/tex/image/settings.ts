// Which TeX Live images this machine builds and serves, and where they live: QUIRE_TEXLIVE
// (comma-separated years, default 2026) and QUIRE_TEXLIVE_DIR (default /var/lib/quire/texlive
// for root, ~/.local/share/quire/texlive otherwise). The configuration (config.ts) reads them
// through here; so do setup's image builder and the default image of tools run outside the
// service (image/default.ts), which need nothing else of the configuration.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isTexliveYear, TEXLIVE_YEARS, type TexliveYear } from './releases.js';

export interface TexliveSettings {
  /** QUIRE_TEXLIVE: the TeX Live years to build and serve, newest first. */
  years: TexliveYear[];
  /** QUIRE_TEXLIVE_DIR: one folder per year holds that year's image. */
  dir: string;
}

/** A QUIRE_TEXLIVE the machine cannot serve (the configuration reports it as a ConfigError). */
export class ImageSettingsError extends Error {}

export function imageSettings(env: Record<string, string | undefined> = process.env): TexliveSettings {
  const raw = (env.QUIRE_TEXLIVE || '2026').split(',').map((year) => year.trim()).filter(Boolean);
  for (const year of raw) {
    if (!isTexliveYear(year)) throw new ImageSettingsError(`QUIRE_TEXLIVE lists TeX Live years out of ${TEXLIVE_YEARS.join(', ')}, got "${year}"`);
  }
  const years = TEXLIVE_YEARS.filter((year) => raw.includes(year));
  const fallback = process.getuid?.() === 0 ? '/var/lib/quire/texlive' : join(homedir(), '.local/share/quire/texlive');
  return { years, dir: resolve(env.QUIRE_TEXLIVE_DIR || fallback) };
}
