// Calls to the Quire API from the browser, with the key this browser keeps (if any).
const KEY_NAME = 'quire.apiKey';

export function storedKey(): string | null {
  return localStorage.getItem(KEY_NAME) ?? sessionStorage.getItem(KEY_NAME);
}

/** Keeps the key in localStorage (remember) or only for this tab's session. */
export function storeKey(key: string, remember = true): void {
  forgetKey();
  (remember ? localStorage : sessionStorage).setItem(KEY_NAME, key);
}

/** True when the key lives in localStorage rather than only this tab's session. */
export function keyRemembered(): boolean {
  return localStorage.getItem(KEY_NAME) !== null;
}

export function forgetKey(): void {
  localStorage.removeItem(KEY_NAME);
  sessionStorage.removeItem(KEY_NAME);
}

export type Json = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Json,
  ) {
    super(typeof body.message === 'string' ? body.message : `Request failed (${status})`);
  }
  get code(): string {
    return typeof this.body.error === 'string' ? this.body.error : 'error';
  }
}

export async function api<T = Json>(
  path: string,
  options: { method?: string; body?: unknown; key?: string | null } = {},
): Promise<T> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? storedKey() : options.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError(0, { error: 'network_error', message: 'Could not reach the server. Check your connection and retry.' });
  }
  if (response.status === 204) return {} as T;
  const text = await response.text();
  let body: Json;
  try {
    body = text ? (JSON.parse(text) as Json) : {};
  } catch {
    body = { error: 'bad_response', message: `The server answered ${response.status} with a body that is not JSON.` };
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body as T;
}

export interface Usage {
  user: { email: string; plan: string };
  usage: { monthly_limit: number; used_this_month: number; resets_at: string };
  stored_assets: { count: number; total_bytes: number; count_limit: number | null; total_bytes_limit: number; remaining_bytes: number };
  templates: { count: number; limit: number | null; remaining: number | null };
  api_key: { prefix: string; created_at: string };
  limits: { allowed_compilers: string[]; max_pages_per_document: number; max_stored_assets_count: number | null };
}
