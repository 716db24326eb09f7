// No two folders of src/ import each other, at any distance (docs/operations.md, "Layers"):
// the import graph of src/**/*.ts folded to its top-level folders (a file at the top of src/
// is its own node) has no cycle. The layering lint forbids named directions; this sees a
// cycle between two folders it allows both ways. The same function is shown failing on a
// small graph with a cycle, so an empty answer is not a function that finds nothing.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { describeCycle, folderCycles, folderOf, foldToFolders, importEdges, type ImportEdge } from './folder-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Cycles known and owned elsewhere, each to be removed by the change that ends it: none today. */
const ALLOWED: ReadonlyArray<readonly string[]> = [];

const edge = (from: string, to: string): ImportEdge => ({ from, to });

describe('folder cycles', () => {
  test('src/ has none', () => {
    const edges = importEdges(root);
    // The graph is real: hundreds of imports, and the edges the docs name are in it.
    assert.ok(edges.length > 500, `only ${edges.length} imports found`);
    const graph = foldToFolders(edges);
    for (const [from, to] of [['src/compile', 'src/queue'], ['src/queue', 'src/tex'], ['src/templates', 'src/compile'], ['src/accounts', 'src/quota']]) {
      assert.ok(graph.get(from!)?.has(to!), `${from} → ${to} is an edge of the graph`);
    }
    const cycles = folderCycles(graph).filter((cycle) => !ALLOWED.some((allowed) => cycle.members.join() === [...allowed].sort().join()));
    assert.deepEqual(cycles.map(describeCycle), [], 'folders that import each other (fix the import, do not widen ALLOWED)');
  });

  test('a synthetic graph with a cycle is reported, with the imports that make it', () => {
    const edges = [
      edge('src/a/x', 'src/b/y'),
      edge('src/b/y', 'src/c/z'),
      edge('src/c/z', 'src/a/w'),
      edge('src/c/z', 'src/d/v'),
      // Inside one folder: no cycle, whatever the files do.
      edge('src/d/v', 'src/d/u'),
      edge('src/d/u', 'src/d/v'),
      edge('src/e/t', 'src/top'),
    ];
    const cycles = folderCycles(foldToFolders(edges));
    assert.deepEqual(cycles.map(describeCycle), ['src/a → src/b → src/c → src/a (src/a/x imports src/b/y; src/b/y imports src/c/z; src/c/z imports src/a/w)']);
  });

  test('two cycles through one folder are one component; a file at the top of src/ is its own node', () => {
    const edges = [edge('src/a/x', 'src/b/y'), edge('src/b/y', 'src/a/x'), edge('src/a/x', 'src/config'), edge('src/config', 'src/a/w')];
    const cycles = folderCycles(foldToFolders(edges));
    assert.equal(cycles.length, 1);
    assert.deepEqual(cycles[0]!.members, ['src/a', 'src/b', 'src/config.ts']);
    assert.equal(describeCycle(cycles[0]!), 'src/a → src/b → src/a (src/a/x imports src/b/y; src/b/y imports src/a/x; also in this cycle: src/config.ts)');
    assert.equal(folderOf('src/config'), 'src/config.ts');
    assert.equal(folderOf('src/tex/image/store'), 'src/tex');
  });
});
