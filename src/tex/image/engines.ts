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

async function probe(engine: Compiler): Promise<EngineStatus> {
  try {
    const stdout = await imageTool([engine, '--version']);
    return { available: true, version: stdout.split('\n')[0]?.trim() };
  } catch (err) {
    return { available: false, error: (err as Error).message.split('\n')[0] };
  }
}

export async function probeEngines(): Promise<EngineReport> {
  const results = await Promise.all(COMPILERS.map(probe));
  return Object.fromEntries(COMPILERS.map((engine, i) => [engine, results[i]])) as EngineReport;
}
