// The README is the front door (issue #14): short, linking every page of docs/, and the
// documented error catalogue says what src/errors.ts does.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { normalize } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS } from '../../src/errors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${root}/${path}`, 'utf8');

describe('documentation', () => {
  test('the README stays under 30 KB and links every page of docs/', () => {
    assert.ok(statSync(`${root}/README.md`).size < 30 * 1024, 'README.md is under 30 KB');
    const readme = read('README.md');
    const pages = readdirSync(`${root}/docs`).filter((name) => name.endsWith('.md'));
    assert.ok(pages.length >= 5);
    for (const page of pages) assert.ok(readme.includes(`](docs/${page})`), `README links docs/${page}`);
    assert.ok(readme.includes('](SECURITY.md)'), 'README links SECURITY.md');
  });

  test('every link to a page of the README or docs/ and to a heading in it resolves (GitHub heading anchors)', () => {
    const anchors = (path: string) => {
      const seen = new Map<string, number>();
      // Headings outside code blocks, as GitHub makes their anchors: lower case, punctuation dropped, spaces to hyphens.
      const text = read(path).replace(/^```[\s\S]*?^```/gm, '');
      return new Set(
        [...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => {
          const slug = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
          const n = seen.get(slug) ?? 0;
          seen.set(slug, n + 1);
          return n === 0 ? slug : `${slug}-${n}`;
        }),
      );
    };
    const pages = ['README.md', ...readdirSync(`${root}/docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const broken: string[] = [];
    for (const page of pages) {
      const dir = page.includes('/') ? page.slice(0, page.lastIndexOf('/') + 1) : '';
      for (const [, target, anchor] of read(page).matchAll(/\]\(([\w./-]*\.md)?(?:#([^)\s]+))?\)/g)) {
        if (!target && !anchor) continue;
        const path = target ? normalize(`${dir}${target}`) : page;
        if (!existsSync(`${root}/${path}`)) broken.push(`${page} → ${target}`);
        else if (anchor && path.endsWith('.md') && !anchors(path).has(anchor)) broken.push(`${page} → ${path}#${anchor}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('docs/configuration.md names every environment variable src/ reads', () => {
    const names = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(`${root}/${dir}`, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
        else if (entry.name.endsWith('.ts')) {
          // env.NAME, env['NAME'], and the config readers' integer(env, 'NAME', …).
          for (const m of read(`${dir}/${entry.name}`).matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\]|, ['"]([A-Z][A-Z0-9_]+)['"])/g)) {
            names.add((m[1] ?? m[2] ?? m[3])!);
          }
        }
      }
    };
    walk('src');
    assert.ok(names.has('QUIRE_QUEUE') && names.has('QUIRE_MCP_TIMEOUT_SECONDS'), 'the scan finds both kinds of read');
    const documented = read('docs/configuration.md');
    const missing = [...names].filter((name) => !documented.includes(`\`${name}\``)).sort();
    assert.deepEqual(missing, [], 'read in src/ but not in docs/configuration.md');
  });

  test('docs/errors.md lists every code of the catalogue with its status, and no other', () => {
    const rows = [...read('docs/errors.md').matchAll(/^\| (\d{3}) \| `([a-z0-9_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
    const documented = new Map<string, number>();
    for (const [code, status] of rows) {
      assert.equal(documented.get(code) ?? status, status, `${code} is documented with one status`);
      documented.set(code, status);
    }
    assert.deepEqual(Object.fromEntries([...documented].sort()), Object.fromEntries(Object.entries(ERROR_STATUS).sort()));
  });
});
