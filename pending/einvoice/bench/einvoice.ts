// Bench row of output.einvoice (issue 41): a V2 invoice render as an EN 16931 e-invoice (the
// invoice mapped from the render's data, its CII XML built and validated with the official
// rules, embedded in a PDF/A-3b checked by the output step) against the same render of the same
// data without it, interleaved in the same run. Goal from the issue: at most 2× the plain render.
import type { BenchContext, LatencyCase } from './cases.js';

const TEMPLATE = [
  '\\documentclass{article}',
  '\\usepackage[a4paper,margin=20mm]{geometry}',
  '\\usepackage{booktabs}',
  '\\begin{document}',
  '\\section*{Invoice {{ number }}}',
  'Billed to {{ buyer }}, {{ city }}.',
  '',
  '\\begin{tabular}{lrr}\\toprule Item & Qty & Price\\\\ \\midrule',
  '{% for item in items %}{{ item.name }} & {{ item.qty }} & {{ item.price }}\\\\',
  '{% endfor %}\\bottomrule\\end{tabular}',
  '',
  'VAT {{ rate }}\\,\\%. Payable within 30 days to {{ iban }}.',
  '\\end{document}',
  '',
].join('\n');

const data = (n: number) => ({
  number: `E-${n}`,
  buyer: `Customer ${n} GmbH`,
  city: 'München',
  rate: 19,
  iban: 'DE02120300000000202051',
  items: [
    { name: 'Consulting', qty: 8, price: 100 + (n % 50) },
    { name: 'Travel', qty: 1, price: 80 },
  ],
});

const FROM_DATA = {
  number: '$.number',
  issue_date: '2026-03-10',
  currency: 'EUR',
  seller: {
    name: 'ACME GmbH',
    vat_id: 'DE123456789',
    address: { line1: 'Hauptstraße 1', city: 'Berlin', postcode: '10115', country: 'DE' },
    electronic_address: { scheme: 'EM', id: 'billing@acme.example' },
  },
  buyer: { name: '$.buyer', address: { city: '$.city', postcode: '80331', country: 'DE' }, electronic_address: { scheme: 'EM', id: 'ap@buyer.example' } },
  payment: { iban: '$.iban', terms: 'Payable within 30 days' },
  lines: { $each: '$.items', map: { name: '@.name', quantity: '@.qty', unit_price: '@.price', vat: { category: 'S', rate: '$.rate' } } },
};

export function einvoiceCases(ctx: BenchContext): LatencyCase[] {
  let templateId = 0;
  const path = () => `/api/v2/templates/${templateId}/render`;
  return [
    {
      name: 'e-invoice render (EN 16931: XML + validation + PDF/A-3b) vs the plain render',
      prepare: async () => {
        templateId = await ctx.createTemplate('bench-einvoice', TEMPLATE);
      },
      service: (n) => ctx.call({ data: data(n), output: { einvoice: { profile: 'en16931', from_data: FROM_DATA } } }, path()),
      bare: (n) => ctx.call({ data: data(-n - 1) }, path()),
      versus: 'the same V2 render without output.einvoice',
      goal: { kind: 'ratio', value: 2 },
    },
  ];
}
