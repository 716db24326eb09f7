// Newline-delimited messages from a byte stream with a bound on each: a line longer than the bound is
// dropped while it arrives (only its first and last bytes are kept, to find its JSON-RPC id), so
// whatever a client writes to `quire mcp`, its memory stays bounded. readline holds a line whole,
// however long, which is why this exists.
import type { Readable } from 'node:stream';

export interface LineHandlers {
  line(text: string): void;
  /** A line over the bound: its id when the kept ends show one (null otherwise) and its length. */
  tooLong(id: string | number | null, bytes: number): void;
  end(): void;
}

/** Bytes kept at each end of an over-long line: enough for `{"jsonrpc":"2.0","id":…` or `…,"id":…}`. */
const KEPT = 4096;
const NEWLINE = 0x0a;

/** Reads `input` until it ends; returns a function that stops reading. */
export function readBoundedLines(input: Readable, maxBytes: number, on: LineHandlers): () => void {
  let parts: Buffer[] = [];
  let length = 0;
  let head: Buffer | undefined; // set once the line is over the bound
  let tail = Buffer.alloc(0);

  const take = (piece: Buffer) => {
    length += piece.length;
    if (!head && length <= maxBytes) {
      parts.push(piece);
      return;
    }
    if (!head) {
      // Crossing the bound: keep the ends, let go of the rest (never one copy of the whole line).
      parts.push(piece);
      head = Buffer.concat(parts, Math.min(KEPT, length));
      let kept = 0;
      let from = parts.length;
      while (from > 0 && kept < KEPT) kept += parts[--from]!.length;
      tail = Buffer.concat(parts.slice(from)).subarray(-KEPT);
      parts = [];
      return;
    }
    tail = Buffer.concat([tail, piece]).subarray(-KEPT);
  };
  const close = () => {
    if (head) on.tooLong(recoverId(head.toString('utf8'), tail.toString('utf8')), length);
    else if (length > 0) on.line(Buffer.concat(parts).toString('utf8').replace(/\r$/, ''));
    parts = [];
    length = 0;
    head = undefined;
    tail = Buffer.alloc(0);
  };
  const onData = (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      take(chunk.subarray(start, end));
      close();
      start = end + 1;
    }
    if (start < chunk.length) take(chunk.subarray(start));
  };
  const onEnd = () => {
    close();
    on.end();
  };
  input.on('data', onData);
  input.once('end', onEnd);
  return () => {
    input.off('data', onData);
    input.off('end', onEnd);
    input.pause();
  };
}

const SCALAR = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"id":…` or `{"jsonrpc":"2.0","id":…` at the start (how most clients write a request). */
const LEADING_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + SCALAR);
/** `…,"id":…}` at the end (the MCP SDK writes the id last): the value before the last `}` is top-level. */
const TRAILING_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*` + SCALAR + String.raw`\s*\}\s*$`);

/** The JSON-RPC id of a line known only by its ends, or null (JSON-RPC's id when it cannot be told). */
export function recoverId(head: string, tail: string): string | number | null {
  const found = LEADING_ID.exec(head) ?? TRAILING_ID.exec(tail);
  if (!found) return null;
  try {
    const id = JSON.parse(found[1]!) as unknown;
    return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
  } catch {
    return null;
  }
}
