// The sums of an invoice (EN 16931 BR-CO-10 … BR-CO-17, BR-S-08 and kin) computed from its lines
// when the caller leaves them out: line nets, the VAT breakdown by category and rate, and the
// document totals, each rounded to cents as the rules expect. A total the caller gives is kept
// as given (it is the caller's statement; the validator says when it does not add up).
import type { Invoice, InvoiceLine, InvoiceVat } from './model.js';

type Amount = number | string;

/** Cents, rounded half away from zero (what the EN 16931 rules' round() does to two decimals). */
export function round2(value: number): number {
  const scaled = Math.abs(value) * 100;
  // The epsilon keeps 1.005 * 100 = 100.49999… from rounding down.
  const cents = Math.round(scaled + 1e-7);
  return (Math.sign(value) * cents) / 100 || 0;
}

export const num = (value: Amount | undefined): number => (value === undefined ? 0 : typeof value === 'number' ? value : Number(value));
/** An amount as the XML writes it: a caller's string kept byte for byte, a number with two decimals. */
export const money = (value: Amount): string => (typeof value === 'string' ? value : round2(value).toFixed(2));
/** A quantity or price: a caller's string kept, a number written plainly (no exponent). */
export const decimal = (value: Amount): string => (typeof value === 'string' ? value : String(Number(value.toFixed(6))));

const sum = (items: ReadonlyArray<{ amount: Amount }> | undefined) => (items ?? []).reduce((s, a) => s + num(a.amount), 0);

/** A line's net amount (BT-131): quantity × price − its allowances + its charges, unless given. */
export function lineNet(line: InvoiceLine): number {
  if (line.net_amount !== undefined) return num(line.net_amount);
  return round2(num(line.quantity) * num(line.unit_price) - sum(line.allowances) + sum(line.charges));
}

/** The key of a VAT breakdown group: category and rate (absent for O). */
export const vatKey = (vat: InvoiceVat) => `${vat.category}:${vat.category === 'O' ? '' : (vat.rate ?? 0)}`;

export interface VatGroup {
  vat: InvoiceVat;
  basis: number;
  tax: number;
}

export interface Totals {
  lineTotal: Amount;
  allowanceTotal: Amount | undefined;
  chargeTotal: Amount | undefined;
  taxBasis: Amount;
  taxTotal: Amount;
  grandTotal: Amount;
  prepaid: Amount | undefined;
  due: Amount;
  groups: VatGroup[];
}

/** The VAT breakdown (BG-23) and the document totals (BG-22), the caller's where given. */
export function totalsOf(invoice: Invoice): Totals {
  const groups = new Map<string, VatGroup>();
  const add = (vat: InvoiceVat, amount: number) => {
    const key = vatKey(vat);
    const group = groups.get(key) ?? { vat, basis: 0, tax: 0 };
    group.basis = round2(group.basis + amount);
    groups.set(key, group);
  };
  for (const line of invoice.lines) add(line.vat, lineNet(line));
  for (const a of invoice.allowances ?? []) add(a.vat, -num(a.amount));
  for (const c of invoice.charges ?? []) add(c.vat, num(c.amount));
  for (const group of groups.values()) group.tax = round2((group.basis * (group.vat.rate ?? 0)) / 100);

  const given = invoice.totals ?? {};
  const lineTotal = given.line_total ?? round2(invoice.lines.reduce((s, l) => s + lineNet(l), 0));
  const allowances = invoice.allowances?.length ? round2(sum(invoice.allowances)) : undefined;
  const charges = invoice.charges?.length ? round2(sum(invoice.charges)) : undefined;
  const allowanceTotal = given.allowance_total ?? allowances;
  const chargeTotal = given.charge_total ?? charges;
  const taxBasis = given.tax_basis_total ?? round2(num(lineTotal) - num(allowanceTotal) + num(chargeTotal));
  const taxTotal = given.tax_total ?? round2([...groups.values()].reduce((s, g) => s + g.tax, 0));
  const grandTotal = given.grand_total ?? round2(num(taxBasis) + num(taxTotal));
  const prepaid = given.prepaid;
  const due = given.due ?? round2(num(grandTotal) - num(prepaid));
  return { lineTotal, allowanceTotal, chargeTotal, taxBasis, taxTotal, grandTotal, prepaid, due, groups: [...groups.values()] };
}
