// What every long-running process (API node, compile worker) checks before it serves: a valid
// configuration, and a TeX sandbox that works unless the operator explicitly turned it off.
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { sandboxUid, slotUid } from './tex/sandbox/uids.js';
import { servedImages } from './tex/image/store.js';
import { probeSandbox } from './tex/sandbox/sandbox.js';

/** The configuration, or exit 2 with the reason. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`quire: configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/** Refuses to run untrusted TeX without isolation unless the operator said so explicitly. */
export function requireSandbox(config: Config, log: Logger): void {
  if (config.sandbox) {
    if (servedImages(config).length === 0) {
      log.fatal({ texlive: config.texlive }, 'no TeX image');
      console.error(
        `quire: no TeX image of ${config.texlive.years.join(', ')} in ${config.texlive.dir}.\n` +
          'Build it with scripts/setup.sh (as root; docs/operations.md, TeX images), or set QUIRE_TEXLIVE_DIR to where the images are.',
      );
      process.exit(2);
    }
    const problem = probeSandbox(sandboxUid(slotUid(0)), servedImages(config)[0]!.root);
    if (problem) {
      log.fatal({ problem }, 'bubblewrap cannot run here');
      console.error(
        `quire: the TeX sandbox (bubblewrap) cannot run: ${problem}\n` +
          'Install bubblewrap and allow user namespaces, or set QUIRE_SANDBOX=off to run TeX unisolated (never with untrusted input).',
      );
      process.exit(2);
    }
  } else {
    log.warn('QUIRE_SANDBOX=off: TeX runs WITHOUT bubblewrap isolation; any document can read what this process can read. Never expose this server to untrusted input.');
    console.error('quire: WARNING: QUIRE_SANDBOX=off, TeX runs without isolation');
  }
}
