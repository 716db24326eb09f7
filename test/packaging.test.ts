// The image installs exactly the Debian packages setup.sh installs, and the compose file
// runs the documented topology with the flags bubblewrap needs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

function setupPackages(): string[] {
  const block = /^PACKAGES=\(([\s\S]*?)\)/m.exec(read('scripts/setup.sh'));
  assert.ok(block, 'PACKAGES=( … ) in scripts/setup.sh');
  return block[1]!.split(/\s+/).filter(Boolean).sort();
}

function dockerfilePackages(): string[] {
  const install = /apt-get install -y --no-install-recommends \\([\s\S]*?)&&/.exec(read('Dockerfile'));
  assert.ok(install, 'an apt-get install line in the Dockerfile');
  return install[1]!.split(/[\s\\]+/).filter(Boolean).sort();
}

test('the Dockerfile installs the same Debian packages as scripts/setup.sh', () => {
  const packages = setupPackages();
  assert.ok(packages.includes('bubblewrap') && !packages.some((name) => name.startsWith('texlive')), 'TeX Live lives in the TeX image, not on the host');
  assert.deepEqual(dockerfilePackages(), packages);
});

test('the service runs on Node 20 (bookworm) and its TeX image is forky, both bases replaceable', () => {
  const dockerfile = read('Dockerfile');
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  assert.deepEqual(froms, ['${NODE_BASE}', '${TEX_BASE}', '${NODE_BASE}']);
  assert.match(dockerfile, /^ARG NODE_BASE=node:20-bookworm-slim$/m);
  assert.match(dockerfile, /^ARG TEX_BASE=debian:forky-slim$/m);
  assert.match(dockerfile, /texlive-images\.js --here 2026/);
});

test('compose runs two API nodes, two workers, PostgreSQL, Redis and S3, with the sandbox flags', () => {
  const compose = read('compose.yaml');
  for (const service of ['api-a', 'api-b', 'worker-a', 'worker-b', 'postgres', 'redis', 's3']) {
    assert.match(compose, new RegExp(`^  ${service}:$`, 'm'), service);
  }
  assert.equal(compose.match(/command: \["node", "dist\/src\/cli\/quire\.js", "worker"\]/g)?.length, 2);
  for (const flag of ['seccomp=unconfined', 'apparmor=unconfined', 'systempaths=unconfined']) {
    assert.match(compose, new RegExp(`- ${flag}`));
    assert.match(read('Dockerfile'), new RegExp(`--security-opt ${flag}`));
  }
  assert.match(compose, /QUIRE_QUEUE: bullmq/);
  assert.match(compose, /QUIRE_S3_BUCKET: /);
});
