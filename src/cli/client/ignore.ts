// `.quireignore`: the files of a project folder `quire compile` does not send, in the
// gitignore pattern language people already know — `#` comments, `!` to take a file back,
// a trailing `/` for folders only, a leading or inner `/` to anchor at the project root, `*`
// and `?` within a name, `**` across folders. As in git, nothing inside an ignored folder can
// be taken back (the folder is never read).

interface Rule {
  negate: boolean;
  folderOnly: boolean;
  pattern: RegExp;
}

function globToRegExp(glob: string, anchored: boolean): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // "**/" matches no folder or any number of them; a trailing "**" everything below.
      if (glob[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${out}$`);
}

/** The rules of a `.quireignore` text, in order (the last match decides, as in git). */
export function parseIgnore(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    if (line.startsWith('\\')) line = line.slice(1);
    const folderOnly = line.endsWith('/');
    if (folderOnly) line = line.slice(0, -1);
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ negate, folderOnly, pattern: globToRegExp(line, anchored) });
  }
  return rules;
}

/** Whether the project path `rel` ("chapters/old.tex", or a folder "drafts") is ignored. */
export function isIgnored(rules: Rule[], rel: string, isFolder: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.folderOnly && !isFolder) continue;
    if (rule.pattern.test(rel)) ignored = !rule.negate;
  }
  return ignored;
}
