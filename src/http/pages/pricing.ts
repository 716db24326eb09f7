// /pricing: what each plan allows, drawn from the plan table so the page can never disagree
// with the checks. Every `upgrade_url` points here.
import { PLANS, type Limits, type Tier } from '../../quota/plans.js';
import { h, layout } from './html.js';

const TIERS: Tier[] = ['anonymous', 'free', 'starter', 'pro', 'business'];
const TITLES: Record<Tier, string> = { anonymous: 'No key', free: 'Free', starter: 'Starter', pro: 'Pro', business: 'Business' };

function bytes(n: number): string {
  if (n === 0) return '—';
  if (n >= 1024 ** 3) return `${n / 1024 ** 3} GB`;
  if (n >= 1024 ** 2) return `${n / 1024 ** 2} MB`;
  return `${n / 1024} KB`;
}

const count = (n: number | null) => (n === null ? 'unlimited' : n === 0 ? '—' : n.toLocaleString('en-US'));

const ROWS: Array<[string, (l: Limits) => string]> = [
  ['Compilations', (l) => `${l.compilesPerPeriod.toLocaleString('en-US')} per ${l.period}`],
  ['Compilers', (l) => l.compilers.join(', ')],
  ['Pages per document', (l) => count(l.maxPages)],
  ['LaTeX source', (l) => bytes(l.maxLatexBytes)],
  ['PDF size', (l) => bytes(l.maxPdfBytes)],
  ['Compile timeout', (l) => `${l.compileTimeoutSeconds} s`],
  ['Assets per document', (l) => count(l.maxAssetsPerDocument)],
  ['Assets per document, total', (l) => bytes(l.maxAssetsBytesPerDocument)],
  ['Saved templates and render', (l) => (l.paid ? count(l.templates) : '—')],
  ['Kept versions per template', (l) => (l.paid ? count(l.templateVersions) : '—')],
  ['Stored assets', (l) => (l.paid ? `${count(l.maxStoredAssets)}, ${bytes(l.maxStoredAssetsBytes)}` : '—')],
  ['PDF links valid for', (l) => `${l.pdfLinkSeconds / 3600} h`],
];

export function pricingPage(baseUrl: string): string {
  const head = TIERS.map((tier) => `<th scope="col">${h(TITLES[tier])}</th>`).join('');
  const rows = ROWS.map(
    ([label, cell]) => `<tr><th scope="row">${h(label)}</th>${TIERS.map((tier) => `<td>${h(cell(PLANS[tier]))}</td>`).join('')}</tr>`,
  ).join('\n');
  const body = `
<h1>Plans</h1>
<p>Every limit below is the one the service enforces. Over-limit documents with a key are not refused
when they can be previewed: you get the first pages your plan allows and a note of the plan that
covers the whole document. Paid plans have a grace buffer beyond the monthly limit.</p>
<table class="schema">
<thead><tr><th scope="col"></th>${head}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2>Getting a key or another plan</h2>
<p>This is a self-hosted Quire. Keys come from <a href="/signup">sign-up</a> when the operator has
opened it; otherwise the operator creates accounts and sets plans with
<code>quire account create --email you@example.com --plan starter</code> and
<code>quire account set-plan</code>. See your plan and counters on the <a href="/dashboard">dashboard</a>.</p>`;
  return layout({ title: 'Plans — Quire', description: 'What each Quire plan allows', body, canonical: `${baseUrl}/pricing` });
}
