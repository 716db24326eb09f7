// Setup's image step: builds each TeX Live year QUIRE_TEXLIVE names into QUIRE_TEXLIVE_DIR
// (once; a ready image costs one file read) and prints what is installed. `--here <year>`
// instead turns the running Debian root into that year's image (the Dockerfile's TeX stage);
// `--warm` prepares the served images' caches as the service would (the Dockerfile bakes them).
import { ConfigError, texliveSettings } from '../config.js';
import { ensureImage, installHere } from '../tex/image/build.js';
import { isTexliveYear } from '../tex/image/releases.js';

try {
  const here = process.argv.indexOf('--here');
  if (here !== -1) {
    const year = process.argv[here + 1];
    if (!isTexliveYear(year)) throw new ConfigError(`--here takes a TeX Live year, got "${year ?? ''}"`);
    await installHere(year);
    process.exit(0);
  }
  if (process.argv.includes('--warm')) {
    const started = Date.now();
    // Loaded here only: --here runs in the Dockerfile's TeX stage, with dist/ but no node_modules.
    const { warmImageCaches } = await import('../services.js');
    const warmed = await warmImageCaches({ sandbox: true, texlive: texliveSettings() });
    if (warmed.length === 0) throw new ConfigError('--warm found no ready TeX image to warm (QUIRE_TEXLIVE, QUIRE_TEXLIVE_DIR)');
    for (const { year, formats, luaCache } of warmed) console.log(`quire texlive ${year}: caches ready (${formats}, ${luaCache})`);
    console.log(`quire texlive: warmed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    process.exit(0);
  }
  const { years, dir } = texliveSettings();
  for (const year of years) {
    const image = await ensureImage(dir, year);
    if (process.argv.includes('--verbose')) console.log(`quire texlive ${year}: ${image.root} (${image.texliveVersion}, ${(image.bytes / 1e9).toFixed(1)} GB)`);
  }
} catch (err) {
  console.error(err instanceof ConfigError ? `quire setup: ${err.message}` : `quire setup: ${(err as Error).message}`);
  process.exit(1);
}
