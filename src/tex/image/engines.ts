// Which TeX engines this machine can run (in the default TeX image, or the host's TeX Live
// without one), probed once at start for /health.
import { COMPILERS, type Compiler } from '../compilers.js';
import { imageTool } from './tools.js';

export interface EngineStatus {
  available: boolean;
  version?: string;
  error?: string;
}

export type EngineReport = Record<Compiler, EngineStatus>;

async function probe(engine: Compiler, root: string | undefined): Promise<EngineStatus> {
  try {
    const stdout = await imageTool([engine, '--version'], root);
    return { available: true, version: stdout.split('\n')[0]?.trim() };
  } catch (err) {
    return { available: false, error: (err as Error).message.split('\n')[0] };
  }
}

/** `root`: the TeX image the jobs run in (the default year's); none: the host's TeX Live. */
export async function probeEngines(root: string | undefined): Promise<EngineReport> {
  const results = await Promise.all(COMPILERS.map((engine) => probe(engine, root)));
  return Object.fromEntries(COMPILERS.map((engine, i) => [engine, results[i]])) as EngineReport;
}
