// Which profile an invoice declares (BT-24, the specification identifier) and which official rule
// sets check each profile. Factur-X MINIMUM and BASIC WL are not EN 16931 invoices (no lines),
// so the EN 16931 rules would fail them for what they leave out by design: they get the XML
// schema only, and the report says so. XRechnung adds KoSIT's rules to EN 16931's.
import type { EinvoiceProfile } from './report.js';

/** The rule sets a check runs. */
export interface RuleChoice {
  xsd: boolean;
  en16931: boolean;
  xrechnung: boolean;
}

/** The profile a BT-24 value names (Factur-X 1.0 / ZUGFeRD 2.x ids and XRechnung's), or null. */
export function profileOf(specification: string | null): EinvoiceProfile | null {
  if (!specification) return null;
  const id = specification.toLowerCase();
  if (id.includes('urn:xeinkauf.de:kosit:xrechnung')) return 'xrechnung';
  if (/(factur-x\.eu:1p0|zugferd\.de:2p0):minimum$/.test(id)) return 'minimum';
  if (/(factur-x\.eu:1p0|zugferd\.de:2p0):basicwl$/.test(id)) return 'basic-wl';
  if (/(factur-x\.eu:1p0|zugferd\.de:2p0):basic$/.test(id)) return 'basic';
  if (/(factur-x\.eu:1p0|zugferd\.de:2p0):extended$/.test(id)) return 'extended';
  if (id === 'urn:cen.eu:en16931:2017') return 'en16931';
  return null;
}

/** The Factur-X profiles: CII only. */
export const CII_ONLY: readonly EinvoiceProfile[] = ['minimum', 'basic-wl', 'basic', 'extended'];

export function rulesFor(profile: EinvoiceProfile | null, syntax: 'CII' | 'UBL'): RuleChoice {
  const xsd = syntax === 'CII';
  if (profile === 'minimum' || profile === 'basic-wl') return { xsd, en16931: false, xrechnung: false };
  return { xsd, en16931: true, xrechnung: profile === 'xrechnung' };
}
