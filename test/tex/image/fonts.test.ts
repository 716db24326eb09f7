// The image's font check and repair (issue 39): links resolved inside the image (never on the
// host), a planted dangling link found and named (the negative control), Debian's other
// capitalisation relinked, the files no Debian package has removed and nothing else, map names
// parsed and swapped to their Type 1 twin; on the served image: no font link dangles, every
// file pdftex.map names is found but TeX Live's own gaps, and a planted name is not.
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { danglingLinks, judgeFonts, mapFontFiles, pdftexMapFiles, repairLinks, unfound, withTwins } from '../../../src/tex/image/fonts.js';
import { knownGap } from '../../../src/tex/image/map-gaps.js';
import { defaultImageRoot } from '../../../src/tex/image/default.js';
import { checkFonts, runInImage } from '../../../src/tex/image/verify.js';

async function fakeRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'quire-fonts-'));
  const dist = join(root, 'usr/share/texlive/texmf-dist/fonts/opentype');
  await mkdir(join(dist, 'good'), { recursive: true });
  await mkdir(join(dist, 'gnome/cantarell'), { recursive: true });
  await mkdir(join(dist, 'ascender/opensans'), { recursive: true });
  await mkdir(join(root, 'usr/share/fonts/opentype/good'), { recursive: true });
  await mkdir(join(root, 'usr/share/fonts/truetype/open-sans'), { recursive: true });
  await writeFile(join(root, 'usr/share/fonts/opentype/good/Good.otf'), 'font');
  await writeFile(join(root, 'usr/share/fonts/truetype/open-sans/OpenSans-SemiBold.ttf'), 'font');
  // Absolute and relative links to a file that is there, and one through a linked folder.
  await symlink('/usr/share/fonts/opentype/good/Good.otf', join(dist, 'good/Good.otf'));
  await symlink('../../../../../fonts/opentype/good/Good.otf', join(dist, 'good/Relative.otf'));
  await symlink('/usr/share/fonts/opentype', join(root, 'usr/share/texlive/texmf-dist/fonts/linked'));
  // /etc/hostname exists on the host, not in this root: inside the image it points nowhere.
  await symlink('/etc/hostname', join(dist, 'good/Planted.otf'));
  await symlink('/usr/share/fonts/opentype/cantarell/Cantarell-Bold.otf', join(dist, 'gnome/cantarell/Cantarell-Bold.otf'));
  await symlink('/usr/share/fonts/truetype/open-sans/OpenSans-Semibold.ttf', join(dist, 'ascender/opensans/OpenSans-SemiBold.ttf'));
  // Documentation is left out of images on purpose: its links are not looked at.
  await symlink('/usr/share/doc/texlive-doc', join(root, 'usr/share/texlive/texmf-dist/doc'));
  return root;
}

test('dangling links are found inside the image root, not on the host; a planted one is named', async () => {
  const root = await fakeRoot();
  try {
    const found = await danglingLinks(root);
    assert.deepEqual(
      found.map((d) => d.link),
      [
        '/usr/share/texlive/texmf-dist/fonts/opentype/ascender/opensans/OpenSans-SemiBold.ttf',
        '/usr/share/texlive/texmf-dist/fonts/opentype/gnome/cantarell/Cantarell-Bold.otf',
        '/usr/share/texlive/texmf-dist/fonts/opentype/good/Planted.otf',
      ],
    );
    const check = judgeFonts(found, 10, []);
    assert.equal(check.problems.length, 3);
    assert.match(check.problems[2]!, /font link \/usr\/share\/texlive\/texmf-dist\/fonts\/opentype\/good\/Planted\.otf points to \/etc\/hostname, which is not in the image/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('repair: another capitalisation is relinked, a file no Debian package has is removed, anything else is left to fail', async () => {
  const root = await fakeRoot();
  try {
    const { relinked, removed, left } = await repairLinks(root);
    assert.deepEqual(relinked.map((d) => d.target), ['/usr/share/fonts/truetype/open-sans/OpenSans-SemiBold.ttf']);
    const fixed = join(root, 'usr/share/texlive/texmf-dist/fonts/opentype/ascender/opensans/OpenSans-SemiBold.ttf');
    assert.equal(await readlink(fixed), '../../../../../../fonts/truetype/open-sans/OpenSans-SemiBold.ttf');
    assert.deepEqual(removed.map((d) => d.link), ['/usr/share/texlive/texmf-dist/fonts/opentype/gnome/cantarell/Cantarell-Bold.otf']);
    await assert.rejects(lstat(join(root, removed[0]!.link)), { code: 'ENOENT' });
    assert.deepEqual(left.map((d) => d.link), ['/usr/share/texlive/texmf-dist/fonts/opentype/good/Planted.otf']);
    assert.deepEqual((await danglingLinks(root)).map((d) => d.link), ['/usr/share/texlive/texmf-dist/fonts/opentype/good/Planted.otf']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('map files: the font and encoding names, and a TrueType name swapped to its Type 1 twin', () => {
  const map = [
    '% comment <not-this.pfb',
    'ClearSans-tlf-t1--base ClearSans "AutoEnc_zx ReEncodeFont" <[clr_zxbkm4.enc <ClearSans-Regular.ttf',
    'cmr10 CMR10 <cmr10.pfb',
    'rpplr Palatino-Roman <<uplr8a.pfa',
  ].join('\n');
  assert.deepEqual(mapFontFiles(map), ['ClearSans-Regular.ttf', 'clr_zxbkm4.enc', 'cmr10.pfb', 'uplr8a.pfa']);
  assert.equal(
    withTwins(map, new Map([['ClearSans-Regular.ttf', 'ClearSans-Regular.pfb']])).split('\n')[1],
    'ClearSans-tlf-t1--base ClearSans "AutoEnc_zx ReEncodeFont" <[clr_zxbkm4.enc <ClearSans-Regular.pfb',
  );
  // TeX Live's own gaps pass; a file Debian left out does not.
  assert.equal(knownGap('AGaramondPro-Bold.otf'), true);
  assert.equal(knownGap('zmo_3757re.enc'), true);
  assert.equal(knownGap('ClearSans-Regular.ttf'), false);
  assert.equal(knownGap('cmr10.pfb'), false);
});

const root = defaultImageRoot();

test('the served image: no font link dangles, every mapped file is found but TeX Live’s own gaps, a planted name is not', async () => {
  assert.ok(root, 'a TeX image (npm run setup)');
  const workspace = await mkdtemp(join(tmpdir(), 'quire-fonts-image-'));
  try {
    await chmod(workspace, 0o777);
    const run = (script: string) => runInImage(root!, workspace, script, 120_000);
    // A name with quotes (TeX Live 2022's Baskervaldx.map has one) before found ones: xargs once stopped at it and called the rest unfound.
    const planted = await unfound(["Baskervaldx-Reg.pfb'''", 'cmr10.pfb', 'ClearSans-Regular.pfb', 'quire-no-such-font.pfb'], join(workspace, 'n.txt'), '/job/n.txt', run);
    assert.deepEqual(planted, ["Baskervaldx-Reg.pfb'''", 'quire-no-such-font.pfb']);
    const names = await pdftexMapFiles(root!);
    assert.ok(names && names.length > 10_000, `pdftex.map names ${names?.length} files`);
    const check = await checkFonts(root!, workspace);
    assert.deepEqual(check.problems, []);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});
