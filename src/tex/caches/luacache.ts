// lualatex's font cache (luaotfload's names database and font tables) takes seconds to build.
// It is built once, next to the job workspaces; every job starts from a copy (see pool.ts).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../clock.js';
import { SANDBOX_WORKDIR, sandboxed } from '../sandbox/sandbox.js';

const WARM = String.raw`\documentclass{article}
\usepackage{fontspec}
\setmainfont{Latin Modern Roman}
\begin{document}
Quire \textbf{bold} \emph{italic} $x^2$ \texttt{mono}
\end{document}
`;

/**
 * Returns `<root>/texmf-var`, building it first when missing (in the TeX image `image`, or with the
 * host's lualatex when there is none). Safe when several processes race.
 */
export async function prepareLuaCache(root: string, image: string | undefined, clock: Clock = systemClock): Promise<string> {
  const cache = join(root, 'texmf-var');
  if (existsSync(join(cache, '.ready'))) return cache;
  await mkdir(root, { recursive: true });
  const work = await mkdtemp(join(root, 'luacache-'));
  const building = join(work, 'texmf-var');
  try {
    await writeFile(join(work, 'warm.tex'), WARM);
    await new Promise<void>((resolve, reject) => {
      const argv = ['lualatex', '--nosocket', '-no-shell-escape', '-interaction=nonstopmode', 'warm.tex'];
      const inside = image === undefined ? building : `${SANDBOX_WORKDIR}/texmf-var`;
      const command = sandboxed(
        { workspace: work, isolate: image !== undefined, root: image, env: { TEXMFVAR: inside, TEXMFCACHE: inside } },
        argv,
      );
      const child = spawn(command.file, command.args, { cwd: work, env: command.env ?? {}, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`lualatex exited ${code}`))));
    });
    await writeFile(join(building, '.ready'), clock.now().toISOString());
    await chmod(building, 0o755);
    // Whoever renames first wins; a loser's copy is simply dropped.
    await rename(building, cache).catch((err: NodeJS.ErrnoException) => {
      if (!['EEXIST', 'ENOTEMPTY'].includes(err.code ?? '')) throw err;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return cache;
}
