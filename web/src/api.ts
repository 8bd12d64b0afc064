// The API client: same origin, the owner's session cookie, and the CSRF
// token (from login, setup or /auth/status) on every mutation.

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
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
    throw new ApiError(resp.status, String(e.code ?? 'error'), String(e.message ?? `HTTP ${resp.status}`));
  }
  return data as T;
}

export interface AuthStatus {
  setupRequired: boolean;
  authenticated: boolean;
  csrfToken?: string;
  passkeys: boolean;
}

export interface Mission {
  id: string;
  projectId: string;
  title: string;
  status: string;
  rootRunId: string;
  spentUsd: number;
  model?: string;
  effort?: string;
  spec: { objective?: string; criteria?: string[]; budgetUsd?: number; network?: string; [k: string]: unknown };
  result?: { summary?: string; [k: string]: unknown };
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
}

export interface Run {
  id: string;
  missionId: string;
  status: string;
  budget: { usd?: number; maxTurns?: number; [k: string]: unknown };
  spentUsd: number;
  turns: number;
  cancelRequested: boolean;
  error?: string;
}

export interface Step {
  runId: string;
  seq: number;
  kind: string;
  name: string;
  effect: string;
  status: string;
  request: any;
  result?: any;
  error?: any;
  costUsd: number;
  startedAt: number;
  endedAt?: number;
  truncated: boolean;
}

export interface Wait {
  id: string;
  runId: string;
  missionId: string;
  stepSeq: number;
  kind: 'approval' | 'question' | string;
  payload: any;
  status: string;
  resolution?: any;
  resolveBy?: number;
  createdAt: number;
}

export interface Spend {
  today: string;
  todayUsd: number;
  capUsd: number;
  capReached: boolean;
  days: { day: string; usd: number }[];
  byModel: { model: string; usd: number; calls: number }[];
}

export interface Model {
  id: string;
  provider: string;
  tier?: string;
  label?: string;
  price: { input: number; output: number };
  available: boolean | null;
  note?: string;
}

export interface Project {
  id: string;
  name: string;
  path: string;
  dir: string;
  mode: string;
}

export interface AosEvent {
  id: number;
  missionId: string;
  runId: string;
  seq: number | null;
  kind: string;
  payload: any;
  trust?: string;
  createdAt: number;
}
