// Quire's invoice shape (issue 41, docs/einvoice.md "Building an e-invoice"): the JSON a caller
// sends as output.einvoice.invoice, declared once with TypeBox so the HTTP routes, the MCP tools
// and the service check it alike. Small and flat on purpose (seller, buyer, lines, VAT, totals,
// payment): mapping.ts turns it into @e-invoice-eu/core's UBL-shaped model, whose CII writer
// makes the XML (docs/decisions.md says why). Amounts are decimal strings or numbers; totals
// the caller leaves out are computed (totals.ts), totals the caller gives are kept as given so
// the EN 16931 rules judge them.
import { Type, type Static } from '@sinclair/typebox';
import { EINVOICE_PROFILES } from './report.js';

const str = (description: string, maxLength = 200) => Type.String({ minLength: 1, maxLength, description });
const opt = (description: string, maxLength = 200) => Type.Optional(str(description, maxLength));
/** A decimal amount: a number, or a string like "1190.00" (kept exactly). */
const Amount = Type.Union([Type.Number(), Type.String({ pattern: '^-?[0-9]{1,15}(\\.[0-9]{1,6})?$' })], { description: 'Decimal amount (number or string like "1190.00")' });
const DateStr = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD' });
const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, e.g. DE' });

export const VAT_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M'] as const;
const Vat = Type.Object(
  {
    category: Type.Union(VAT_CATEGORIES.map((c) => Type.Literal(c)), {
      description: 'UNCL5305: S standard, Z zero, E exempt, AE reverse charge, K intra-EU, G export, O outside scope, L/M Canary Islands / Ceuta-Melilla',
    }),
    rate: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Percent; 0 for Z/E/AE/K/G, absent for O' })),
    exemption_reason: opt('Why no VAT is due (needed for E, AE, K, G, O), e.g. "Reverse charge"', 500),
    exemption_code: Type.Optional(Type.String({ pattern: '^VATEX-[A-Z0-9-]{1,20}$', description: 'VATEX code, e.g. VATEX-EU-AE' })),
  },
  { additionalProperties: false },
);

const Address = Type.Object(
  {
    line1: opt('Street and number'),
    line2: opt('Additional address line'),
    city: opt('City'),
    postcode: opt('Post code', 20),
    subdivision: opt('Region or state'),
    country: Country,
  },
  { additionalProperties: false },
);

const Contact = Type.Object({ name: opt('Contact person or department'), phone: opt('Telephone', 50), email: opt('E-mail', 254) }, { additionalProperties: false });
const Electronic = Type.Object(
  { scheme: Type.String({ pattern: '^[A-Z0-9]{2,4}$', description: 'EAS code: EM e-mail, 9930 German VAT id, 0204 Leitweg-ID, 0088 GLN …' }), id: str('The address') },
  { additionalProperties: false, description: 'Electronic address (BT-34 / BT-49), required by XRechnung' },
);

const Party = (who: string) =>
  Type.Object(
    {
      name: str(`${who}'s legal name`),
      trading_name: opt('Trading name, when it differs'),
      vat_id: opt('VAT identifier with country prefix, e.g. DE123456789', 30),
      tax_number: opt('Tax registration number (seller, when there is no VAT id)', 30),
      legal_id: opt('Legal registration identifier (e.g. commercial register)', 50),
      address: Address,
      contact: Type.Optional(Contact),
      electronic_address: Type.Optional(Electronic),
    },
    { additionalProperties: false },
  );

const AllowanceCharge = Type.Object(
  {
    amount: Amount,
    reason: opt('Why, e.g. "Loyalty discount", "Freight"'),
    reason_code: Type.Optional(Type.String({ pattern: '^[A-Z0-9]{1,3}$', description: 'UNCL5189 (allowance) or UNCL7161 (charge) code' })),
  },
  { additionalProperties: false },
);

const DocAllowanceCharge = Type.Object({ ...AllowanceCharge.properties, vat: Vat }, { additionalProperties: false });

const Line = Type.Object(
  {
    id: opt('Line id (default: its position)', 50),
    name: str('Item name'),
    description: opt('Item description', 1000),
    quantity: Amount,
    unit: Type.Optional(Type.String({ pattern: '^[A-Z0-9]{1,3}$', default: 'C62', description: 'UN/ECE Rec 20 unit: C62 piece, HUR hour, DAY, KGM …' })),
    unit_price: Amount,
    vat: Vat,
    allowances: Type.Optional(Type.Array(AllowanceCharge, { maxItems: 20 })),
    charges: Type.Optional(Type.Array(AllowanceCharge, { maxItems: 20 })),
    net_amount: Type.Optional(Amount),
  },
  { additionalProperties: false },
);

const Totals = Type.Object(
  {
    line_total: Type.Optional(Amount),
    allowance_total: Type.Optional(Amount),
    charge_total: Type.Optional(Amount),
    tax_basis_total: Type.Optional(Amount),
    tax_total: Type.Optional(Amount),
    grand_total: Type.Optional(Amount),
    prepaid: Type.Optional(Amount),
    due: Type.Optional(Amount),
  },
  { additionalProperties: false, description: 'Left out: computed from the lines. Given: kept as given (the EN 16931 rules check them, BR-CO-10 … BR-CO-16).' },
);

export const INVOICE_TYPES = ['380', '381', '384', '389', '751', '326', '875', '876', '877'] as const;

export const InvoiceBody = Type.Object(
  {
    number: str('Invoice number (BT-1)', 100),
    type_code: Type.Optional(Type.Union(INVOICE_TYPES.map((c) => Type.Literal(c)), { default: '380', description: '380 invoice, 381 credit note, 384 corrected, 389 self-billed, 326 partial, 751 information' })),
    issue_date: DateStr,
    due_date: Type.Optional(DateStr),
    delivery_date: Type.Optional(DateStr),
    period: Type.Optional(Type.Object({ start: DateStr, end: DateStr }, { additionalProperties: false })),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 invoice currency, e.g. EUR' }),
    buyer_reference: opt('Buyer reference (BT-10); for XRechnung the Leitweg-ID', 100),
    order_reference: opt('Purchase order reference (BT-13)', 100),
    contract_reference: opt('Contract reference (BT-12)', 100),
    preceding_invoice: Type.Optional(Type.Object({ number: str('Preceding invoice number', 100), issue_date: Type.Optional(DateStr) }, { additionalProperties: false, description: 'For a credit note or correction (BG-3)' })),
    notes: Type.Optional(Type.Array(str('Note', 2000), { maxItems: 20 })),
    seller: Party('The seller'),
    buyer: Party('The buyer'),
    payment: Type.Optional(
      Type.Object(
        {
          means_code: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{1,3}$', default: '58', description: 'UNCL4461: 58 SEPA credit transfer, 30 credit transfer, 59 SEPA direct debit, 10 cash, 48 card …' })),
          iban: opt('Account to pay to (IBAN or account number)', 50),
          account_name: opt('Account holder'),
          bic: opt('BIC', 20),
          reference: opt('Remittance information', 140),
          terms: opt('Payment terms text', 1000),
          mandate: opt('Direct debit mandate reference', 50),
        },
        { additionalProperties: false },
      ),
    ),
    lines: Type.Array(Line, { minItems: 1, maxItems: 1000 }),
    allowances: Type.Optional(Type.Array(DocAllowanceCharge, { maxItems: 50 })),
    charges: Type.Optional(Type.Array(DocAllowanceCharge, { maxItems: 50 })),
    totals: Type.Optional(Totals),
  },
  { additionalProperties: false, description: 'Quire\'s invoice shape (docs/einvoice.md): seller, buyer, lines with VAT, optional document allowances/charges, payment; totals computed when left out.' },
);

export type Invoice = Static<typeof InvoiceBody>;
export type InvoiceLine = Invoice['lines'][number];
export type InvoiceVat = InvoiceLine['vat'];

export const EinvoiceBody = Type.Object(
  {
    profile: Type.Union(EINVOICE_PROFILES.map((p) => Type.Literal(p)), {
      description: 'Factur-X / ZUGFeRD profile (minimum, basic-wl, basic, en16931, extended) or xrechnung (CII, embedded as xrechnung.xml)',
    }),
    invoice: Type.Optional(InvoiceBody),
    from_data: Type.Optional(
      Type.Unknown({
        description: "Renders only, instead of invoice: the invoice shape with values like \"$.seller.name\" taken from the render's data ($each, $if; docs/einvoice.md)",
      }),
    ),
  },
  { additionalProperties: false, description: 'Extension (issue 41, docs/einvoice.md): build the CII XML from `invoice`, validate it with the EN 16931 rules (and XRechnung\'s), embed it in a PDF/A-3b.' },
);

export type EinvoiceRequest = Static<typeof EinvoiceBody>;
