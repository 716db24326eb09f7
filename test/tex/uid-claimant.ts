// A process of its own for test/tex/sandbox-start.test.ts: takes a uid block in the claims
// folder it is given (or, as the old rule did, simply uses the block it is given, as two
// processes whose ids agree modulo 1000 did), starts a real sandbox as its slot 0's uid,
// prints "<block> <host uid of the sandbox>" and keeps both until its stdin ends.
import { readFileSync } from 'node:fs';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { Session } from '../../src/tex/sandbox/session.js';
import { claimUidBlock, releaseUidBlock, sandboxUid, slotUid } from '../../src/tex/sandbox/uids.js';

const [dir, mode, first, workFolder] = process.argv.slice(2) as [string, 'claim' | 'old', string, string];
const block = mode === 'claim' ? claimUidBlock(dir, undefined, Number(first)) : Number(first);
if (mode === 'claim') process.once('exit', () => releaseUidBlock(dir, block));
const session = await Session.open(workFolder, sandboxUid(slotUid(0, block)), { isolate: true, root: defaultImageRoot(), env: {} });
await session.run(['true']);
const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${session.pid}/status`, 'utf8'))?.[1];
process.stdout.write(`${block} ${uid}\n`);
process.stdin.resume();
process.stdin.on('end', () => void session.close().then(() => process.exit(0)));
