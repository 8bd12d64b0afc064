// The API client: same origin, the owner's session cookie, and the CSRF
// token (from login, setup or /auth/status) on every mutation.

import type { components } from './schema';

/** ApiError is a failed request: the HTTP status, the error's code and
 * message, and, for the agent, store and device errors of seed 000, its
 * guidance (what to do next). */
export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public guidance?: string,
  ) {
    super(message);
  }
}

let csrf = '';
let onUnauthorized: () => void = () => {};

/** setCsrf keeps the session's CSRF token in memory (never in storage). */
export function setCsrf(t: string | undefined) {
  csrf = t ?? '';
}

/** onSessionExpired registers what to do when the API answers 401. */
export function onSessionExpired(f: () => void) {
  onUnauthorized = f;
}

/** api calls /api/v1<path> and decodes the JSON answer. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrf) headers['X-CSRF-Token'] = csrf;
  let resp: Response;
  try {
    resp = await fetch('/api/v1' + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'offline', 'The server cannot be reached.');
  }
  if (resp.status === 204) return undefined as T;
  const text = await resp.text();
  let data: any = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!resp.ok) {
    const e = data?.error ?? {};
    if (resp.status === 401 && !path.startsWith('/auth/')) onUnauthorized();
    throw new ApiError(resp.status, String(e.code ?? 'error'), String(e.message ?? `HTTP ${resp.status}`), typeof e.guidance === 'string' && e.guidance ? e.guidance : undefined);
  }
  return data as T;
}

// The API's types, generated from the OpenAPI document (docs/openapi.json,
// the server's GET /api/v1/openapi.json) by openapi-typescript into
// schema.d.ts: scripts/console-build.sh regenerates them and CI fails when
// they drift. Type-only: nothing of them reaches the bundle.
type Schemas = components['schemas'];

/** Loose is T with its free-form JSON fields (JSONValue in the spec: a
 * step's request, an event's payload) readable as any: their shape
 * depends on the kind, and the console reads them defensively. */
type Loose<T> = { [K in keyof T]: Schemas['JSONValue'] extends T[K] ? any : T[K] };

export type AuthStatus = Schemas['AuthStatus'];
export type Mission = Loose<Schemas['Mission']>;
export type Run = Loose<Schemas['Run']>;
export type Step = Loose<Schemas['Step']>;
export type Wait = Loose<Schemas['Wait']>;
export type Spend = Schemas['Spend'];
export type Model = Schemas['Model'];
export type Project = Schemas['Project'];
export type AosEvent = Loose<Schemas['Event']>;
export type Settings = Schemas['Settings'];
export type JSONValue = Schemas['JSONValue'];
export type Package = Schemas['Package'];
export type StoreList = Schemas['StoreListResult'];
export type StoreInspect = Schemas['StoreInspectResult'];
export type Operation = Schemas['Operation'];
export type PrepareResult = Schemas['PrepareResult'];
export type Agent = Schemas['Agent'];
export type Receipt = Schemas['Receipt'];
export type Device = Schemas['Device'];
export type DevicePairing = Schemas['DevicePairing'];
export type Reveal = Schemas['Reveal'];

/** newKey is a fresh idempotency key: one per intent (a form opened),
 * kept across retries of that intent. crypto.getRandomValues works in
 * insecure contexts too (randomUUID does not). */
export function newKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return 'console-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
