import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import layeringPlugin from './eslint/layering.js';

const root = fileURLToPath(new URL('.', import.meta.url));

// Domain folders: the service itself, below the doors (HTTP, MCP, CLI) that call it. Every
// folder of src/ is named here or in DOORS or WIRE; test/lint/layering.test.ts checks that.
export const DOMAIN = [
  'src/accounts',
  'src/assets',
  'src/compile',
  'src/gallery',
  'src/idempotency',
  'src/jobs',
  'src/queue',
  'src/quota',
  'src/signing',
  'src/storage',
  'src/templates',
  'src/tex',
  'src/webhooks',
];
export const DOORS = ['src/http', 'src/mcp', 'src/cli'];
// What the doors share (error body, field errors, JSON safety, the HTTP↔MCP seam): below the
// doors, above the domain.
export const WIRE = ['src/wire'];

/** One rule per door: it may not import another door (the app assembly, src/app.ts, joins them). */
const doorRules = DOORS.map((door) => ({
  from: [door],
  forbid: DOORS.filter((other) => other !== door),
  why: 'a door never imports another door: shared wire helpers live in wire/, and src/app.ts assembles the doors',
}));
/** What queue/ may use besides tex/: the blob store and the storage faults its transport meets. */
const BELOW_QUEUE = ['src/queue', 'src/tex', 'src/storage'];

export const layers = [
  {
    from: DOMAIN,
    forbid: [...DOORS, ...WIRE],
    why: 'domain modules never import http/, mcp/, cli/ or wire/; the doors call the domain, not the reverse',
  },
  {
    from: ['src/queue'],
    forbid: [...DOMAIN.filter((area) => !BELOW_QUEUE.includes(area)), ...DOORS, 'src/services.ts', 'src/server.ts'],
    why: 'queue/ sits between compile/ and tex/: it runs TeX jobs for the domain and knows nothing of compiles, accounts or quota',
  },
  {
    from: WIRE,
    forbid: DOORS,
    why: 'wire/ is shared by the doors and imports none of them',
  },
  ...doorRules,
  {
    from: ['src/cli/client'],
    forbid: ['src'],
    // The two pure, import-free rules the client shares with the service.
    except: ['src/cli/client', 'src/compile/clutter', 'src/compile/main-file'],
    why: 'the `quire compile` client talks HTTP to any Quire server (through @quire/client): it never loads the service, only the pure project rules it shares with it',
  },
  {
    from: ['src/tex'],
    forbid: [...DOMAIN.filter((area) => area !== 'src/tex'), ...DOORS, ...WIRE, 'src/errors.ts', 'src/links.ts', 'src/services.ts', 'src/server.ts', 'src/app.ts', 'src/config.ts'],
    why: 'tex/ is the bottom layer: it imports no domain module, and the runner throws its own errors, not HTTP codes; it reads no configuration (its image and limits are handed to it; config.ts imports tex/image/settings.ts, never the other way)',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'clients/typescript/dist/', 'node_modules/', 'data/', 'test-output/', 'public/build/', 'pending/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { quire: layeringPlugin },
    rules: { 'quire/layering': ['error', { root, layers }] },
  },
);
