// Setup's image step: builds each TeX Live year QUIRE_TEXLIVE names into QUIRE_TEXLIVE_DIR
// (once; a ready image costs one file read) and prints what is installed.
import { ConfigError, texliveSettings } from '../config.js';
import { ensureImage } from '../tex/image/build.js';

try {
  const { years, dir } = texliveSettings();
  for (const year of years) {
    const image = await ensureImage(dir, year);
    if (process.argv.includes('--verbose')) console.log(`quire texlive ${year}: ${image.root} (${image.texliveVersion}, ${(image.bytes / 1e9).toFixed(1)} GB)`);
  }
} catch (err) {
  console.error(err instanceof ConfigError ? `quire setup: ${err.message}` : `quire setup: ${(err as Error).message}`);
  process.exit(1);
}
