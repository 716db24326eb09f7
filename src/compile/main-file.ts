// Which file of a project is the document: the one rule the service (project_zip) and the
// `quire` client (src/cli/client/project.ts) both apply, so a folder compiles the same file
// whether the server or the client looks at it. Pure and import-free on purpose: the client
// talks HTTP to any server and must not load the service to know this.

/** The main file, or why there is none: no candidate, or several (`candidates` lists them). */
export type MainChoice = { main: string } | { main: null; candidates: string[] };

/** A `\documentclass` on a line before any `%`: a commented-out one does not make a document. */
const DOCUMENTCLASS = /^[^%\n]*\\documentclass/m;

/**
 * `main.tex` at the top if there is one, otherwise the single top-level `.tex` file that
 * contains `\documentclass` outside a comment. `texts` are the project's text files as
 * [path relative to the project, contents].
 */
export function chooseMainFile(texts: Iterable<readonly [string, string]>): MainChoice {
  const candidates: string[] = [];
  for (const [name, text] of texts) {
    if (name === 'main.tex') return { main: name };
    if (!name.includes('/') && name.toLowerCase().endsWith('.tex') && DOCUMENTCLASS.test(text)) candidates.push(name);
  }
  return candidates.length === 1 ? { main: candidates[0]! } : { main: null, candidates };
}
