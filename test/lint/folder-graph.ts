// The import graph of src/ folded to its top-level folders, and the cycles in it. A folder
// cycle (compile ↔ templates, quota ↔ accounts) means neither folder can be read, tested or
// moved without the other; the layering lint (eslint/layering.js) forbids named directions
// but cannot see a cycle between two domain folders it allows both ways. TypeScript's own
// scanner finds the imports (static, type-only, re-exports, dynamic import()), so a specifier
// in a string or a comment is not one.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of one module by another, as ids relative to the project root ('src/quota/plans'). */
export interface ImportEdge {
  from: string;
  to: string;
}

const EXTENSION = /\.(?:[cm]?[jt]s|tsx?)$/;

function moduleId(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).join('/').replace(EXTENSION, '');
}

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative imports between the modules of `root/src`. Packages (no leading dot) are not part of the graph. */
export function importEdges(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sources(join(root, 'src'))) {
    const from = moduleId(root, file);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (fileName.startsWith('.')) edges.push({ from, to: moduleId(root, resolve(dirname(file), fileName)) });
    }
  }
  return edges;
}

/** A module's node in the folder graph: its top-level folder of src/ ('src/quota'), or the file itself when it sits at the top of src/ ('src/config.ts'). */
export function folderOf(id: string): string {
  const parts = id.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${id}.ts`;
}

/** Folder → folder → the first import seen that makes the edge (the example a report names). */
export type FolderGraph = Map<string, Map<string, ImportEdge>>;

export function foldToFolders(edges: Iterable<ImportEdge>): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const edge of edges) {
    const [from, to] = [folderOf(edge.from), folderOf(edge.to)];
    if (!graph.has(from)) graph.set(from, new Map());
    if (!graph.has(to)) graph.set(to, new Map());
    if (from !== to && !graph.get(from)!.has(to)) graph.get(from)!.set(to, edge);
  }
  return graph;
}

/** Folders that reach each other, and one closed walk among them with the import behind each step. */
export interface FolderCycle {
  /** Every folder of the strongly connected component, sorted. */
  members: string[];
  /** A shortest way from the first member back to itself (['a', 'b', 'a']). */
  folders: string[];
  via: ImportEdge[];
}

/**
 * The cycles of `graph`: one per strongly connected component of two or more folders
 * (Tarjan's algorithm), each given with a closed walk through the component and the import
 * that makes each of its steps. A folder importing itself is no cycle.
 */
export function folderCycles(graph: FolderGraph): FolderCycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => {
    const walk = closedWalk(graph, new Set(component), component[0]!);
    return { members: component, folders: walk, via: walk.slice(1).map((to, i) => graph.get(walk[i]!)!.get(to)!) };
  });
}

/** A shortest way from `start` back to itself inside `members` (breadth first), as the folders passed. */
function closedWalk(graph: FolderGraph, members: Set<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        const walk = [start];
        for (let at = node; at !== start; at = previous.get(at)!) walk.splice(1, 0, at);
        return [...walk, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/** One line per cycle: 'src/a → src/b → src/a (src/a/x imports src/b/y; src/b/z imports src/a/w)', and the other members of a larger component. */
export function describeCycle(cycle: FolderCycle): string {
  const others = cycle.members.filter((member) => !cycle.folders.includes(member));
  const also = others.length > 0 ? `; also in this cycle: ${others.join(', ')}` : '';
  return `${cycle.folders.join(' → ')} (${cycle.via.map((edge) => `${edge.from} imports ${edge.to}`).join('; ')}${also})`;
}
