// Where the TeX images live and what a ready one records about itself. An image is the folder
// `<dir>/<year>`; it appears there only by a rename once built and verified, and its marker
// (`etc/quire-image.json` inside it) says what it holds.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEXLIVE_YEARS, type TexliveYear } from './releases.js';

export const MARKER = 'etc/quire-image.json';

export interface ImageInfo {
  year: TexliveYear;
  /** Debian codename the image was built from. */
  suite: string;
  /** Debian's TeX Live version (texlive-base), e.g. 2026.20260911-1. */
  texliveVersion: string;
  /** First line of `<engine> --version` for each engine. */
  engines: Record<string, string>;
  builtAt: string;
  buildSeconds: number;
  bytes: number;
  /** The builder's RECIPE it was made with (absent: 1, before recipes were recorded). */
  recipe?: number;
}

export interface TexImage extends ImageInfo {
  /** The image's root folder on the host. */
  root: string;
}

export function imageRoot(dir: string, year: TexliveYear): string {
  return join(dir, year);
}

/** Work folder of an unfinished build: its root, step stamps and package list. */
export function buildDir(dir: string, year: TexliveYear): string {
  return join(dir, `.build-${year}`);
}

/** Downloaded .deb files, kept across interrupted builds and removed once the image is ready. */
export function debCache(dir: string, year: TexliveYear): string {
  return join(dir, '.cache', year, 'debs');
}

export function lockPath(dir: string, year: TexliveYear): string {
  return join(dir, `.build-${year}.lock`);
}

export function readImage(dir: string, year: TexliveYear): TexImage | null {
  const root = imageRoot(dir, year);
  const marker = join(root, MARKER);
  if (!existsSync(marker)) return null;
  try {
    return { ...(JSON.parse(readFileSync(marker, 'utf8')) as ImageInfo), root };
  } catch {
    return null;
  }
}

/** The ready images under `dir`, newest TeX Live first. */
export function installedImages(dir: string): TexImage[] {
  return TEXLIVE_YEARS.map((year) => readImage(dir, year)).filter((image): image is TexImage => image !== null);
}

/**
 * The images a node serves, newest (the default) first: the ready ones among the configured
 * years. None with the sandbox off, whose TeX is the host's (an image runs only as a root).
 */
export function servedImages(config: { sandbox: boolean; texlive: { dir: string; years: readonly string[] } }): TexImage[] {
  if (!config.sandbox) return [];
  return installedImages(config.texlive.dir).filter((image) => config.texlive.years.includes(image.year));
}
