// A strict, small XML reader for uploaded SVG. SVG is a document format that can pull in
// other files and URLs (href, xlink:href, XInclude, CSS url() and @import, stylesheets by
// processing instruction) and expand entities declared in a DTD. We accept only
// well-formed UTF-8 XML whose root is <svg> in the SVG namespace, with no DTD internal
// subset, no entity other than the five predefined ones and character references, and no
// reference other than a fragment (#id) or an embedded PNG/JPEG data: URI. The converter
// then gets the text with any DOCTYPE removed.

export type SvgCheck = { ok: true; sanitised: string } | { ok: false; reason: string };

const SVG_NS = 'http://www.w3.org/2000/svg';
const MAX_DEPTH = 256;
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*(:[A-Za-z_][A-Za-z0-9_.-]*)?/;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** XML 1.0 forbids these characters anywhere in a document. */
const FORBIDDEN_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

class Refused extends Error {}

function refuse(reason: string): never {
  throw new Refused(reason);
}

function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1);
}

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/** Replaces the predefined entities and character references; anything else is refused. */
function decodeEntities(text: string): string {
  return text.replace(/&([^;&\s<]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) refuse(`a bare "&" must be written "&amp;" (near ${shown(match)}).`);
    if (body in PREDEFINED) return PREDEFINED[body]!;
    const numeric = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(body);
    if (numeric) {
      const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : Number(numeric[2]);
      if (code === 0 || code > 0x10ffff) refuse(`the character reference &${body}; is not a valid character.`);
      return String.fromCodePoint(code);
    }
    refuse(`the entity reference &${body}; is not allowed (entities other than &lt; &gt; &amp; &quot; &apos; are refused).`);
  });
}

const DATA_IMAGE = /^data:image\/(png|jpeg|jpg);/i;
const LINK = /^(https?:|mailto:)/i;

function checkHref(element: string, value: string): void {
  const target = value.trim();
  if (target === '' || target.startsWith('#')) return;
  if (DATA_IMAGE.test(target)) return;
  // A hyperlink is written into the PDF as a link, never fetched.
  if (localName(element) === 'a' && LINK.test(target)) return;
  refuse(
    `<${element}> refers to ${shown(target)}; external references are not allowed ` +
      '(use #fragment links or embed images as data:image/png or data:image/jpeg URIs).',
  );
}

/**
 * CSS text as a CSS parser reads it (CSS Syntax 3, "consume an escaped code point"): `\72`
 * or `\000072 ` (1 to 6 hex digits and one optional whitespace) is that code point, a
 * backslash before a newline vanishes, before anything else it is that character. `u\72l(`
 * is `url(`, so the checks read the decoded text.
 */
export function decodeCssEscapes(css: string): string {
  return css.replace(/\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\r\n\f])?|(\r\n|[\n\r\f])|([\s\S]))/g, (_, hex: string | undefined, newline: string | undefined, other: string | undefined) => {
    if (newline !== undefined) return '';
    if (other !== undefined) return other;
    const code = parseInt(hex!, 16);
    return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? '\uFFFD' : String.fromCodePoint(code);
  });
}

/**
 * CSS may fetch through url() and @import. Escapes are decoded before the checks wherever CSS
 * appears (presentation attributes, `style`, `<style>`); in `style` and `<style>` they are
 * refused outright as well.
 */
function checkCss(where: string, raw: string, isStyle: boolean): void {
  if (isStyle && raw.includes('\\')) refuse(`${where} contains a CSS escape ("\\"), which is not allowed.`);
  const css = decodeCssEscapes(raw);
  if (isStyle && /@import/i.test(css)) refuse(`${where} uses @import, which is not allowed.`);
  for (const match of css.matchAll(/url\s*\(\s*(['"]?)([^'")]*)/gi)) {
    const target = (match[2] ?? '').trim();
    if (!target.startsWith('#')) {
      refuse(`${where} refers to ${shown(target)} through url(); only url(#id) is allowed.`);
    }
  }
}

interface Element {
  name: string;
  namespaces: Map<string, string>;
}

class Reader {
  private pos = 0;
  private readonly stack: Element[] = [];
  private doctype: [number, number] | null = null;
  private rootSeen = false;

  constructor(private readonly text: string) {}

  run(): string {
    this.prolog();
    this.element();
    this.misc();
    if (this.pos < this.text.length) refuse('there is content after the closing </svg> tag.');
    if (!this.doctype) return this.text;
    return this.text.slice(0, this.doctype[0]) + this.text.slice(this.doctype[1]);
  }

  private startsWith(token: string): boolean {
    return this.text.startsWith(token, this.pos);
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && ' \t\r\n'.includes(this.text[this.pos]!)) this.pos++;
  }

  private until(token: string, what: string): string {
    const end = this.text.indexOf(token, this.pos);
    if (end < 0) refuse(`${what} is not closed.`);
    const body = this.text.slice(this.pos, end);
    this.pos = end + token.length;
    return body;
  }

  private declaration(): void {
    if (!this.startsWith('<?xml') || !/[\s?]/.test(this.text[this.pos + 5] ?? '')) return;
    this.pos += 5;
    const body = this.until('?>', 'the XML declaration');
    const encoding = /encoding\s*=\s*["']([^"']*)["']/.exec(body)?.[1];
    if (encoding && !/^(utf-?8|us-ascii)$/i.test(encoding)) {
      refuse(`the XML declaration names encoding "${encoding}"; only UTF-8 is accepted.`);
    }
  }

  private prolog(): void {
    this.declaration();
    for (;;) {
      this.skipSpace();
      if (this.startsWith('<!--')) {
        this.pos += 4;
        this.until('-->', 'a comment');
      } else if (this.startsWith('<!DOCTYPE')) {
        if (this.doctype) refuse('there is more than one DOCTYPE.');
        this.doctypeDeclaration();
      } else if (this.startsWith('<?')) {
        this.processingInstruction();
      } else if (this.startsWith('<')) {
        return;
      } else {
        refuse(this.pos >= this.text.length ? 'there is no <svg> element.' : 'there is text before the <svg> element.');
      }
    }
  }

  private doctypeDeclaration(): void {
    const start = this.pos;
    this.pos += '<!DOCTYPE'.length;
    let quote: string | null = null;
    for (; this.pos < this.text.length; this.pos++) {
      const ch = this.text[this.pos]!;
      if (quote) {
        if (ch === quote) quote = null;
      } else if (ch === '"' || ch === "'") {
        quote = ch;
      } else if (ch === '[') {
        refuse('the DOCTYPE has an internal subset; DTD declarations and entities are not allowed.');
      } else if (ch === '>') {
        this.pos++;
        this.doctype = [start, this.pos];
        return;
      }
    }
    refuse('the DOCTYPE is not closed.');
  }

  private processingInstruction(): never {
    const target = /^<\?([^\s?]*)/.exec(this.text.slice(this.pos, this.pos + 64))?.[1] ?? '';
    refuse(`the processing instruction <?${target}?> is not allowed.`);
  }

  private misc(): void {
    for (;;) {
      this.skipSpace();
      if (this.startsWith('<!--')) {
        this.pos += 4;
        this.until('-->', 'a comment');
      } else if (this.startsWith('<?')) {
        this.processingInstruction();
      } else {
        return;
      }
    }
  }

  private name(): string {
    const match = NAME.exec(this.text.slice(this.pos, this.pos + 200));
    if (!match) refuse(`malformed XML at character ${this.pos}: expected an element or attribute name.`);
    this.pos += match[0].length;
    return match[0];
  }

  /** Reads one element and everything inside it, iteratively (no recursion on depth). */
  private element(): void {
    do {
      if (this.startsWith('</')) {
        this.closeTag();
      } else if (this.startsWith('<!--')) {
        this.pos += 4;
        this.until('-->', 'a comment');
      } else if (this.startsWith('<![CDATA[')) {
        this.pos += 9;
        const content = this.until(']]>', 'a CDATA section');
        this.textContent(content);
      } else if (this.startsWith('<?')) {
        this.processingInstruction();
      } else if (this.startsWith('<!')) {
        refuse('DTD declarations are not allowed inside the document.');
      } else if (this.startsWith('<')) {
        this.openTag();
      } else {
        const end = this.text.indexOf('<', this.pos);
        if (end < 0) refuse('the document ends before the <svg> element is closed.');
        const raw = this.text.slice(this.pos, end);
        if (raw.includes(']]>')) refuse('"]]>" is not allowed in text.');
        this.textContent(decodeEntities(raw));
        this.pos = end;
      }
    } while (this.stack.length > 0);
  }

  private textContent(content: string): void {
    const current = this.stack[this.stack.length - 1];
    if (current && localName(current.name) === 'style') checkCss('a <style> element', content, true);
  }

  private openTag(): void {
    if (this.rootSeen && this.stack.length === 0) refuse('there is more than one root element.');
    this.pos++;
    const name = this.name();
    const attributes = new Map<string, string>();
    for (;;) {
      const before = this.pos;
      this.skipSpace();
      if (this.startsWith('/>') || this.startsWith('>')) break;
      if (this.pos === before) refuse(`malformed XML in <${name}>: expected a space between attributes.`);
      const attribute = this.name();
      this.skipSpace();
      if (this.text[this.pos] !== '=') refuse(`malformed XML in <${name}>: attribute ${attribute} has no value.`);
      this.pos++;
      this.skipSpace();
      const quote = this.text[this.pos];
      if (quote !== '"' && quote !== "'") refuse(`malformed XML in <${name}>: the value of ${attribute} is not quoted.`);
      this.pos++;
      const raw = this.until(quote, `the value of ${attribute}`);
      if (raw.includes('<')) refuse(`malformed XML in <${name}>: "<" inside the value of ${attribute}.`);
      if (attributes.has(attribute)) refuse(`<${name}> has the attribute ${attribute} twice.`);
      attributes.set(attribute, decodeEntities(raw));
    }
    const selfClosing = this.startsWith('/>');
    this.pos += selfClosing ? 2 : 1;

    const parent = this.stack[this.stack.length - 1];
    const namespaces = new Map(parent?.namespaces ?? []);
    for (const [attribute, value] of attributes) {
      if (attribute === 'xmlns') namespaces.set('', value);
      else if (attribute.startsWith('xmlns:')) namespaces.set(attribute.slice(6), value);
    }
    this.checkElement(name, attributes, namespaces);
    if (!parent) this.rootSeen = true;
    if (!selfClosing) {
      if (this.stack.length >= MAX_DEPTH) refuse(`elements are nested more than ${MAX_DEPTH} deep.`);
      this.stack.push({ name, namespaces });
    }
  }

  private checkElement(name: string, attributes: Map<string, string>, namespaces: Map<string, string>): void {
    const local = localName(name);
    if (this.stack.length === 0) {
      if (local !== 'svg') refuse(`the root element is <${name}>, not <svg>.`);
      const prefix = name.includes(':') ? name.slice(0, name.indexOf(':')) : '';
      if (namespaces.get(prefix) !== SVG_NS) {
        refuse(`the root <svg> element must declare the SVG namespace (xmlns="${SVG_NS}").`);
      }
    }
    if (local === 'include') refuse(`<${name}> (XInclude) is not allowed.`);
    if (local === 'script') refuse('<script> is not allowed.');
    for (const [attribute, value] of attributes) {
      if (localName(attribute) === 'href') checkHref(name, value);
      if (attribute.startsWith('xmlns')) continue;
      checkCss(`the ${attribute} attribute of <${name}>`, value, attribute === 'style');
    }
  }

  private closeTag(): void {
    this.pos += 2;
    const name = this.name();
    this.skipSpace();
    if (this.text[this.pos] !== '>') refuse(`malformed XML: </${name} is not closed.`);
    this.pos++;
    const open = this.stack.pop();
    if (!open || open.name !== name) {
      refuse(`malformed XML: </${name}> does not match ${open ? `<${open.name}>` : 'any open element'}.`);
    }
  }
}

/** Validates an uploaded SVG and returns the text to convert, or why it is refused. */
export function checkSvg(data: Buffer): SvgCheck {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return { ok: false, reason: 'the SVG is not valid UTF-8 text.' };
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (FORBIDDEN_CHARS.test(text)) return { ok: false, reason: 'the SVG contains control characters XML does not allow.' };
  try {
    return { ok: true, sanitised: new Reader(text).run() };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, reason: `the SVG was refused: ${err.message}` };
    throw err;
  }
}
