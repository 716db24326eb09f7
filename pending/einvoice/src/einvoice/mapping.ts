// Quire's invoice shape (model.ts) as @e-invoice-eu/core's model: a JSON object in UBL's element
// names ("ubl:Invoice", "cbc:ID", "cac:AccountingSupplierParty" …), which that library's CII
// writer turns into CrossIndustryInvoice XML for each Factur-X profile (build.ts). Only names
// are translated here; the sums come from totals.ts. Where EN 16931 needs a text the shape
// leaves optional (the exemption reason of a VAT category without tax), a plain default is
// written and documented (docs/einvoice.md).
import type { Invoice, InvoiceVat } from './model.js';
import { decimal, lineNet, money, totalsOf, type Totals } from './totals.js';

type Json = { [key: string]: Json } | Json[] | string;
type Obj = { [key: string]: Json };

/** The text written when a VAT category without tax comes without its reason (BR-AE-10, BR-E-10 …). */
export const DEFAULT_EXEMPTION: Record<string, string> = {
  AE: 'Reverse charge',
  E: 'Exempt from VAT',
  K: 'Intra-Community supply',
  G: 'Export outside the EU',
  O: 'Not subject to VAT',
};

const clean = (object: Record<string, Json | undefined>): Obj => {
  const out: Obj = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out;
};

const percent = (vat: InvoiceVat) => (vat.category === 'O' ? undefined : decimal(vat.rate ?? 0));
const VAT = { 'cbc:ID': 'VAT' };

function party(p: Invoice['seller'], seller: boolean): Obj {
  const schemes: Obj[] = [];
  if (p.vat_id) schemes.push({ 'cbc:CompanyID': p.vat_id, 'cac:TaxScheme': VAT });
  if (seller && p.tax_number) schemes.push({ 'cbc:CompanyID': p.tax_number, 'cac:TaxScheme': { 'cbc:ID': 'FC' } });
  return clean({
    'cbc:EndpointID': p.electronic_address?.id,
    'cbc:EndpointID@schemeID': p.electronic_address?.scheme,
    'cac:PartyName': p.trading_name ? { 'cbc:Name': p.trading_name } : undefined,
    'cac:PostalAddress': clean({
      'cbc:StreetName': p.address.line1,
      'cbc:AdditionalStreetName': p.address.line2,
      'cbc:CityName': p.address.city,
      'cbc:PostalZone': p.address.postcode,
      'cbc:CountrySubentity': p.address.subdivision,
      'cac:Country': { 'cbc:IdentificationCode': p.address.country },
    }),
    // The buyer has one VAT identifier in the model; the seller up to two (VAT id, tax number).
    'cac:PartyTaxScheme': seller ? (schemes.length ? schemes : undefined) : schemes[0],
    'cac:PartyLegalEntity': clean({ 'cbc:RegistrationName': p.name, 'cbc:CompanyID': p.legal_id }),
    'cac:Contact': p.contact ? clean({ 'cbc:Name': p.contact.name, 'cbc:Telephone': p.contact.phone, 'cbc:ElectronicMail': p.contact.email }) : undefined,
  });
}

function category(vat: InvoiceVat, withReason: boolean): Obj {
  const reason = vat.category in DEFAULT_EXEMPTION ? (vat.exemption_reason ?? (vat.exemption_code ? undefined : DEFAULT_EXEMPTION[vat.category])) : undefined;
  return clean({
    'cbc:ID': vat.category,
    'cbc:Percent': percent(vat),
    ...(withReason ? { 'cbc:TaxExemptionReasonCode': vat.exemption_code, 'cbc:TaxExemptionReason': reason } : {}),
    'cac:TaxScheme': VAT,
  });
}

function allowanceCharge(charge: boolean, item: { amount: number | string; reason?: string; reason_code?: string; vat?: InvoiceVat }, currency: string | undefined): Obj {
  return clean({
    'cbc:ChargeIndicator': charge ? 'true' : 'false',
    'cbc:AllowanceChargeReasonCode': item.reason_code,
    // EN 16931 wants a reason or a code (BR-33, BR-38, BR-42, BR-44).
    'cbc:AllowanceChargeReason': item.reason ?? (item.reason_code ? undefined : charge ? 'Charge' : 'Discount'),
    'cbc:Amount': money(item.amount),
    'cbc:Amount@currencyID': currency,
    'cac:TaxCategory': item.vat ? category(item.vat, false) : undefined,
  });
}

function totalsNode(t: Totals, currency: string): Obj {
  const amount = (name: string, value: number | string | undefined): Obj => (value === undefined ? {} : { [name]: money(value), [`${name}@currencyID`]: currency });
  return {
    ...amount('cbc:LineExtensionAmount', t.lineTotal),
    ...amount('cbc:TaxExclusiveAmount', t.taxBasis),
    ...amount('cbc:TaxInclusiveAmount', t.grandTotal),
    ...amount('cbc:AllowanceTotalAmount', t.allowanceTotal),
    ...amount('cbc:ChargeTotalAmount', t.chargeTotal),
    ...amount('cbc:PrepaidAmount', t.prepaid),
    ...amount('cbc:PayableAmount', t.due),
  };
}

/** The invoice in @e-invoice-eu/core's model, CustomizationID set by the caller of the writer. */
export function toLibraryModel(invoice: Invoice): { 'ubl:Invoice': Obj } {
  const currency = invoice.currency;
  const totals = totalsOf(invoice);
  const pay = invoice.payment;
  const means = pay
    ? [
        clean({
          'cbc:PaymentMeansCode': pay.means_code ?? '58',
          'cbc:PaymentID': pay.reference,
          'cac:PayeeFinancialAccount': pay.iban
            ? clean({ 'cbc:ID': pay.iban, 'cbc:Name': pay.account_name, 'cac:FinancialInstitutionBranch': pay.bic ? { 'cbc:ID': pay.bic } : undefined })
            : undefined,
          'cac:PaymentMandate': pay.mandate ? { 'cbc:ID': pay.mandate } : undefined,
        }),
      ]
    : undefined;
  const body = clean({
    'cbc:ID': invoice.number,
    'cbc:IssueDate': invoice.issue_date,
    'cbc:DueDate': invoice.due_date,
    'cbc:InvoiceTypeCode': invoice.type_code ?? '380',
    'cbc:Note': invoice.notes,
    'cbc:DocumentCurrencyCode': currency,
    'cbc:BuyerReference': invoice.buyer_reference,
    'cac:InvoicePeriod': invoice.period ? { 'cbc:StartDate': invoice.period.start, 'cbc:EndDate': invoice.period.end } : undefined,
    'cac:OrderReference': invoice.order_reference ? { 'cbc:ID': invoice.order_reference } : undefined,
    'cac:BillingReference': invoice.preceding_invoice
      ? [{ 'cac:InvoiceDocumentReference': clean({ 'cbc:ID': invoice.preceding_invoice.number, 'cbc:IssueDate': invoice.preceding_invoice.issue_date }) }]
      : undefined,
    'cac:ContractDocumentReference': invoice.contract_reference ? { 'cbc:ID': invoice.contract_reference } : undefined,
    'cac:AccountingSupplierParty': { 'cac:Party': party(invoice.seller, true) },
    'cac:AccountingCustomerParty': { 'cac:Party': party(invoice.buyer, false) },
    'cac:Delivery': invoice.delivery_date ? { 'cbc:ActualDeliveryDate': invoice.delivery_date } : undefined,
    'cac:PaymentMeans': means,
    'cac:PaymentTerms': pay?.terms ? { 'cbc:Note': pay.terms } : undefined,
    'cac:AllowanceCharge':
      invoice.allowances?.length || invoice.charges?.length
        ? [...(invoice.allowances ?? []).map((a) => allowanceCharge(false, a, currency)), ...(invoice.charges ?? []).map((c) => allowanceCharge(true, c, currency))]
        : undefined,
    'cac:TaxTotal': [
      {
        'cbc:TaxAmount': money(totals.taxTotal),
        'cbc:TaxAmount@currencyID': currency,
        'cac:TaxSubtotal': totals.groups.map((g) => ({
          'cbc:TaxableAmount': money(g.basis),
          'cbc:TaxableAmount@currencyID': currency,
          'cbc:TaxAmount': money(g.tax),
          'cbc:TaxAmount@currencyID': currency,
          'cac:TaxCategory': category(g.vat, true),
        })),
      },
    ],
    'cac:LegalMonetaryTotal': totalsNode(totals, currency),
    'cac:InvoiceLine': invoice.lines.map((line, index) =>
      clean({
        'cbc:ID': line.id ?? String(index + 1),
        'cbc:InvoicedQuantity': decimal(line.quantity),
        'cbc:InvoicedQuantity@unitCode': line.unit ?? 'C62',
        'cbc:LineExtensionAmount': money(lineNet(line)),
        'cbc:LineExtensionAmount@currencyID': currency,
        'cac:AllowanceCharge':
          line.allowances?.length || line.charges?.length
            ? // A line's allowance amount carries no currencyID in CII (CII-DT-031).
              [...(line.allowances ?? []).map((a) => allowanceCharge(false, a, undefined)), ...(line.charges ?? []).map((c) => allowanceCharge(true, c, undefined))]
            : undefined,
        'cac:Item': clean({ 'cbc:Description': line.description, 'cbc:Name': line.name, 'cac:ClassifiedTaxCategory': category(line.vat, false) }),
        'cac:Price': { 'cbc:PriceAmount': decimal(line.unit_price), 'cbc:PriceAmount@currencyID': currency },
      }),
    ),
  });
  return { 'ubl:Invoice': body };
}
