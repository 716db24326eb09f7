// Reading a template source the way the security policy needs: balanced brace groups with a
// bounded scan, line numbers for messages, and forward searches that stay linear.

// Arguments worth checking (file names, URLs, library lists) are short; a longer or unclosed
// one is refused rather than scanned again and again.
export const ARG_SCAN_LIMIT = 2_000;

/** First index of `needle` at or after `from`, remembering misses so repeated searches stay linear. */
export class Finder {
  private readonly found = new Map<string, number>();
  constructor(private readonly source: string) {}
  next(needle: string, from: number): number {
    const known = this.found.get(needle);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const at = this.source.indexOf(needle, from);
    this.found.set(needle, at);
    return at;
  }
}

export class Scanner {
  readonly finder: Finder;
  private readonly lineStarts: number[] = [0];
  constructor(readonly source: string) {
    this.finder = new Finder(source);
    for (let i = 0; i < source.length; i++) if (source[i] === '\n') this.lineStarts.push(i + 1);
  }

  lineAt(index: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** The balanced {…} group starting at or after `from` (blanks and [options] skipped). */
  group(from: number, skipOptions = true, max = ARG_SCAN_LIMIT): { text: string; start: number; end: number; closed: boolean; options: number } | null {
    let i = from;
    let options = 0;
    for (;;) {
      while (i < this.source.length && /\s|\*/.test(this.source[i]!)) i++;
      if (skipOptions && this.source[i] === '[') {
        // As TeX reads a delimited argument: the `]` that ends it is outside braces
        // (alt={a [b] c} is one option), so a data value in an option cannot end it early.
        const close = optionEnd(this.source, i, 2000);
        if (close === -1) return null;
        options += close + 1 - i;
        i = close + 1;
        continue;
      }
      break;
    }
    if (this.source[i] !== '{') return null;
    let depth = 0;
    // Bounded, so a source full of unclosed groups cannot make the scan quadratic.
    const limit = Math.min(this.source.length, i + max);
    for (let j = i; j < limit; j++) {
      const ch = this.source[j];
      if (ch === '\\') {
        j++;
        continue;
      }
      if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) return { text: this.source.slice(i + 1, j), start: i, end: j + 1, closed: true, options };
    }
    return { text: this.source.slice(i + 1, limit), start: i, end: limit, closed: false, options };
  }
}

/** The index of the `]` closing the option that opens at `open` (outside braces), within `max` characters; -1 when none. */
function optionEnd(source: string, open: number, max: number): number {
  let depth = 0;
  const limit = Math.min(source.length, open + max);
  for (let j = open + 1; j < limit; j++) {
    const ch = source[j];
    if (ch === '\\') j++;
    else if (ch === '{') depth++;
    else if (ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === ']' && depth === 0) return j;
  }
  return -1;
}

