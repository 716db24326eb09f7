// The e-invoice fixtures (test/fixtures/einvoice/README.md) and the known ways the tests break
// them: each broken copy names the official rule it must fail.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname, '..', 'fixtures', 'einvoice');
export const fixture = (name: string): string => readFileSync(join(dir, name), 'utf8');

/** ConnectingEurope CII_example4: a valid EN 16931 CII invoice (DKK, 25 % and 12 % VAT). */
export const CII_VALID = fixture('en16931-cii-example4.xml');
export const UBL_VALID = fixture('en16931-ubl-example1.xml');
export const XRECHNUNG_VALID = fixture('xrechnung-cii-br-de-1.xml');

function broken(from: string | RegExp, to: string): string {
  const out = CII_VALID.replace(from, to);
  if (out === CII_VALID) throw new Error(`fixture edit found nothing to replace: ${String(from)}`);
  return out;
}

/** Each negative case: the XML and the rule id it must fail (with the official rules' wording). */
export const NEGATIVE = [
  // BT-106 says 4100 while the lines add up to 4000.
  { name: 'totals that do not add up', xml: broken('<ram:LineTotalAmount>4000</ram:LineTotalAmount>', '<ram:LineTotalAmount>4100</ram:LineTotalAmount>'), rule: 'BR-CO-10' },
  { name: 'a missing buyer name', xml: broken('<ram:Name>Buyercompany ltd</ram:Name>', ''), rule: 'BR-07' },
  { name: 'a VAT category that is not in UNCL 5305', xml: broken(/<ram:CategoryCode>S<\/ram:CategoryCode>(\s*<ram:RateApplicablePercent>12)/, '<ram:CategoryCode>Q</ram:CategoryCode>$1'), rule: 'BR-CL-18' },
  { name: 'a zero-rated category with a 12 % rate', xml: broken(/<ram:CategoryCode>S<\/ram:CategoryCode>(\s*<ram:RateApplicablePercent>12)/g, '<ram:CategoryCode>Z</ram:CategoryCode>$1'), rule: 'BR-Z-05' },
  { name: 'an issue date that is not YYYYMMDD', xml: broken('<udt:DateTimeString format="102">20130410', '<udt:DateTimeString format="102">2013-04-10'), rule: 'CII-DT-097' },
] as const;
