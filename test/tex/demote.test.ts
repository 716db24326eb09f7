// Long jobs of best-effort callers yield the CPU (tex/sandbox/demote.ts), against real sandboxes: a
// looping document still running after the threshold has every process of its sandbox at
// nice 19 in an autogroup at nice 19, before the threshold it runs at normal priority, a
// paying plan's job is never demoted, and the service itself (the canary) keeps its own
// priority and autogroup throughout.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { demoteLater, DEMOTED_NICE } from '../../src/tex/sandbox/demote.js';
import { TexRunner } from '../../src/tex/runner.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Its own uid (see runner.test.ts): the processes listed are this test's only. The suite runs as root.
const UID = CONVERTER_UID - 7;
const LOOP = '\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n';

/** The job's TeX engine as the host sees it: its nice value and its autogroup's. */
function engine(): { nice: number; autogroup: string } | undefined {
  const ps = spawnSync('ps', ['-u', String(UID), '-o', 'pid=,ni=,comm='], { encoding: 'utf8' }).stdout;
  const line = ps.split('\n').find((l) => /pdflatex|pdftex/.test(l));
  if (!line) return undefined;
  const [pid, nice] = line.trim().split(/\s+/);
  return { nice: Number(nice), autogroup: readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('long jobs yield the CPU', () => {
  let workRoot: string;
  const ownAutogroup = readFileSync('/proc/self/autogroup', 'utf8').trim();
  const ownNice = getPriority();

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-demote-'));
  });
  after(() => rm(workRoot, { recursive: true, force: true }));

  /** A looping job, stopped (as a timeout) once the test has looked at it. */
  const loop = (demoteAfterMs: number, yields = true) => {
    const runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), warm: false, demoteAfterMs });
    const stop = new AbortController();
    const fairness = { caller: 'anon:192.0.2.1', background: false, yields };
    const result = runner.run({ source: LOOP, compiler: 'pdflatex', timeoutMs: 30_000, maxFileBytes: 1 << 20, signal: stop.signal, fairness }, UID);
    return { result, stop: () => stop.abort() };
  };

  /** The engine once `ready` holds for it (a loaded machine may take a while to start it). */
  async function engineWhen(ready: (seen: NonNullable<ReturnType<typeof engine>>) => boolean): Promise<ReturnType<typeof engine>> {
    const until = Date.now() + 15_000;
    let seen = engine();
    while (!(seen && ready(seen)) && Date.now() < until) {
      await sleep(100);
      seen = engine();
    }
    return seen;
  }

  test('a job past the threshold runs at nice 19 in a nice-19 autogroup; the service keeps its own', async () => {
    const { result, stop } = loop(300);
    const seen = await engineWhen((s) => s.nice === DEMOTED_NICE && /nice 19$/.test(s.autogroup));
    stop();
    assert.ok(seen, 'the looping engine is running');
    assert.equal(seen.nice, DEMOTED_NICE);
    assert.match(seen.autogroup, /nice 19$/);
    assert.notEqual(seen.autogroup.split(' ')[0], ownAutogroup.split(' ')[0], 'the sandbox is its own session');
    assert.equal(readFileSync('/proc/self/autogroup', 'utf8').trim(), ownAutogroup);
    assert.equal(getPriority(), ownNice);
    assert.equal((await result).outcome, 'timeout');
  });

  /** Runs a loop for a second past its start (past a 300 ms threshold) and asserts it kept normal priority. */
  async function staysAtNormalPriority(demoteAfterMs: number, yields: boolean): Promise<void> {
    const { result, stop } = loop(demoteAfterMs, yields);
    const started = await engineWhen(() => true);
    await sleep(1000);
    const seen = engine();
    stop();
    assert.ok(started && seen, 'the looping engine is running');
    assert.equal(seen.nice, 0);
    assert.match(seen.autogroup, /nice 0$/);
    assert.equal((await result).outcome, 'timeout');
  }

  test('before the threshold a job runs at normal priority', () => staysAtNormalPriority(60_000, true));

  test('a job of a paying plan (one that does not yield) is never demoted', () => staysAtNormalPriority(300, false));

  test('a job that ends first is never demoted, and 0 turns demotion off', async () => {
    let asked = 0;
    const cancel = demoteLater(() => (asked++, undefined), 50);
    cancel();
    demoteLater(() => (asked++, undefined), 0);
    await sleep(150);
    assert.equal(asked, 0);
    demoteLater(() => (asked++, undefined), 20);
    await sleep(100);
    assert.equal(asked, 1);
  });
});
