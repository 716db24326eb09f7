// Headers, Request, Response and FormData for the bundled client commands only
// (scripts/build-cli.mjs injects them in place of the globals). Node's own are undici's: the
// first touch of any of them evaluates undici and the modules it needs (tls, http2, zlib,
// crypto, worker_threads), 35-45 ms of a `quire compile` that takes 150. openapi-fetch, the
// runtime of @quire/client, touches Headers and FormData on every call, so the bundle gives it
// these: enough of the Fetch API for one JSON request and its answer through nodeFetch
// (transport.ts). Run from source (tests, tsx), the commands use Node's own.

type HeadersInit = Headers | Record<string, string> | Iterable<readonly [string, string]>;

/** Case-insensitive header map; repeated names joined with ", " as the Fetch API does. */
export class Headers {
  readonly #map = new Map<string, string>();

  constructor(init?: HeadersInit) {
    if (!init) return;
    const entries = init instanceof Headers ? init.entries() : Symbol.iterator in init ? (init as Iterable<readonly [string, string]>) : Object.entries(init);
    for (const [name, value] of entries) this.append(name, value);
  }

  get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#map.has(name.toLowerCase());
  }

  set(name: string, value: string): void {
    this.#map.set(name.toLowerCase(), String(value));
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const old = this.#map.get(key);
    this.#map.set(key, old === undefined ? String(value) : `${old}, ${value}`);
  }

  delete(name: string): void {
    this.#map.delete(name.toLowerCase());
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void): void {
    for (const [name, value] of this.#map) callback(value, name, this);
  }

  entries(): IterableIterator<[string, string]> {
    return this.#map.entries();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.#map.entries();
  }
}

/** Never made by the commands (they send JSON); openapi-fetch only asks `body instanceof FormData`. */
export class FormData {}

type Body = string | Uint8Array | ArrayBuffer | null | undefined;

function bytesOf(body: Body): Uint8Array {
  if (body === null || body === undefined) return new Uint8Array(0);
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/** A request as openapi-fetch builds it: URL, method, headers, a string or bytes body, a signal. */
export class Request {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly signal: AbortSignal | undefined;
  readonly #body: Body;

  constructor(input: string | URL | Request, init: { method?: string; headers?: HeadersInit; body?: Body; signal?: AbortSignal | null } = {}) {
    const from = input instanceof Request ? input : null;
    this.url = from ? from.url : String(input);
    this.method = (init.method ?? from?.method ?? 'GET').toUpperCase();
    this.headers = new Headers(init.headers ?? from?.headers);
    this.signal = init.signal ?? from?.signal ?? undefined;
    this.#body = init.body ?? (from ? from.#body : undefined);
  }

  get body(): Body {
    return this.#body ?? null;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = bytesOf(this.#body);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
}

/** An answer read whole into memory (nodeFetch reads it before it resolves). */
export class Response {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly #body: Uint8Array | null;

  constructor(body: Body, init: { status?: number; statusText?: string; headers?: HeadersInit } = {}) {
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    this.headers = new Headers(init.headers);
    this.#body = body === null || body === undefined ? null : bytesOf(body);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  get body(): Uint8Array | null {
    return this.#body;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#body ?? new Uint8Array(0);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(this.#body ?? new Uint8Array(0));
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
}
