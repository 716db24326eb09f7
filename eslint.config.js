import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import layeringPlugin from './eslint/layering.js';

const root = fileURLToPath(new URL('.', import.meta.url));

// Domain folders: the service itself, below the doors (HTTP, MCP, CLI) that call it. queue/ is
// one floor between compile/ and tex/; tex/ is the bottom.
const DOMAIN = [
  'src/compile',
  'src/queue',
  'src/tex',
  'src/templates',
  'src/assets',
  'src/accounts',
  'src/quota',
  'src/gallery',
  'src/storage',
  'src/jobs',
  'src/webhooks',
  'src/idempotency',
];
const DOORS = ['src/http', 'src/mcp', 'src/cli'];
// What the doors share (error body, id params, field errors, JSON edge checks): below the doors, above the domain.
const WIRE = ['src/wire'];

export const layers = [
  {
    from: DOMAIN,
    forbid: [...DOORS, ...WIRE],
    why: 'domain modules never import http/, mcp/ or cli/ (nor wire/, what the doors share); the doors call the domain, not the reverse',
  },
  {
    from: WIRE,
    forbid: DOORS,
    why: 'wire/ is shared by the doors and sits below them, so it imports none of them',
  },
  ...DOORS.map((door) => ({
    from: [door],
    forbid: DOORS.filter((other) => other !== door),
    why: 'a door never imports another door: what both need lives in wire/, and src/app.ts mounts the MCP endpoint on the HTTP app',
  })),
  {
    from: ['src/tex'],
    forbid: [...DOMAIN.filter((area) => area !== 'src/tex'), ...DOORS, ...WIRE, 'src/errors.ts', 'src/links.ts', 'src/services.ts', 'src/server.ts'],
    why: 'tex/ is the bottom layer: it imports no domain module, and the runner throws its own errors, not HTTP codes',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'test-output/', 'public/build/'] },
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
