// The watcher `quire watch` stands on (src/cli/client/tree-watch.ts), on the real file system:
// every save is seen, editors' atomic saves (a temporary file renamed over the old one) in a
// subfolder included, and folders made after the start are watched too. Negative control:
// Node 20's recursive fs.watch, which the watcher replaced, misses the second such save.
import assert from 'node:assert/strict';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { watchTree } from '../../src/cli/client/tree-watch.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Saves as vim and VS Code do: a hidden temporary file renamed over the old one. */
async function atomicSave(path: string, text: string): Promise<void> {
  const temporary = join(path, '..', `.${Math.random().toString(36).slice(2)}.swp`);
  await writeFile(temporary, text);
  await rename(temporary, path);
}

describe('a project watch that sees every save', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-tree-watch-'));
    await mkdir(join(root, 'chapters'));
    await mkdir(join(root, '.git'));
    await writeFile(join(root, 'chapters', 'intro.tex'), 'v0\n');
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('three atomic saves of a file in a subfolder are three saves; a new folder is watched; dot folders are not', async () => {
    const seen: string[] = [];
    const tree = await watchTree(root, { skipFolder: (rel) => rel.startsWith('.'), onEvent: (rel) => seen.push(rel), onFull: () => assert.fail('not full') });
    try {
      for (const n of [1, 2, 3]) {
        const before = seen.filter((rel) => rel === 'chapters/intro.tex').length;
        await atomicSave(join(root, 'chapters', 'intro.tex'), `v${n}\n`);
        await sleep(150);
        assert.ok(seen.filter((rel) => rel === 'chapters/intro.tex').length > before, `save ${n} seen: ${seen.join(', ')}`);
      }
      await mkdir(join(root, 'figures'));
      await sleep(150);
      await writeFile(join(root, 'figures', 'plot.tex'), 'x\n');
      await sleep(150);
      assert.ok(seen.includes('figures/plot.tex'), seen.join(', '));
      await writeFile(join(root, '.git', 'index'), 'x\n');
      await sleep(150);
      assert.ok(!seen.some((rel) => rel.startsWith('.git/')), seen.join(', '));
    } finally {
      tree.close();
    }
  });

  test('negative control: Node 20 recursive fs.watch misses the second atomic save in a subfolder', async () => {
    const seen: string[] = [];
    const watcher = watch(root, { recursive: true }, (_event, name) => seen.push(String(name)));
    try {
      await sleep(200);
      await atomicSave(join(root, 'chapters', 'intro.tex'), 'w1\n');
      await sleep(200);
      const afterFirst = seen.filter((rel) => rel === 'chapters/intro.tex').length;
      assert.ok(afterFirst > 0, 'the first save is seen');
      await atomicSave(join(root, 'chapters', 'intro.tex'), 'w2\n');
      await sleep(200);
      assert.equal(seen.filter((rel) => rel === 'chapters/intro.tex').length, afterFirst, 'the second save is missed');
    } finally {
      watcher.close();
    }
  });
});
