import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import layeringPlugin from './eslint/layering.js';

const root = fileURLToPath(new URL('.', import.meta.url));

// Domain folders: the service itself, below the doors (HTTP, MCP, CLI) that call it.
const DOMAIN = ['src/compile', 'src/tex', 'src/templates', 'src/assets', 'src/accounts', 'src/quota', 'src/gallery', 'src/storage'];
const DOORS = ['src/http', 'src/mcp', 'src/cli'];

export const layers = [
  {
    from: DOMAIN,
    forbid: DOORS,
    why: 'domain modules never import http/, mcp/ or cli/; the doors call the domain, not the reverse',
  },
  {
    from: ['src/tex'],
    forbid: [...DOMAIN.filter((area) => area !== 'src/tex'), ...DOORS, 'src/errors.ts', 'src/links.ts', 'src/services.ts', 'src/server.ts'],
    why: 'tex/ is the bottom layer: it imports no domain module, and the runner throws its own errors, not HTTP codes',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'clients/typescript/dist/', 'node_modules/', 'data/', 'test-output/', 'public/build/'] },
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
