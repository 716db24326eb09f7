// What a project carries that a compile has no use for, the one rule for `files` and
// `project_zip`: OS clutter (__MACOSX/), dotfiles and dot folders (.git/, .latexmkrc), and
// files without an extension (LICENSE, Makefile, latexmkrc). They are skipped, not refused, so
// a user can send the folder they have; their paths still pass the containment rule first
// (tex/project/paths.ts), so a "../x" or "/etc/x" is refused even where the file would be skipped.

/** Whether the project path `name` is skipped. */
export function isClutter(name: string): boolean {
  const parts = name.split('/');
  const file = parts.at(-1)!;
  return parts[0] === '__MACOSX' || parts.some((part) => part.startsWith('.') && part !== '.' && part !== '..') || !file.includes('.');
}
