/** The API client of the web application: JSON over fetch, the bearer token kept in localStorage. */

const TOKEN_KEY = 'coffre.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** Called when a protected call answers 401: the session is over. */
let onUnauthenticated: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onUnauthenticated = handler;
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Turns an error answer into an ApiError carrying the catalog code. */
export async function errorOf(res: Response): Promise<ApiError> {
  let code = 'HTTP_' + res.status;
  let message = res.statusText || 'Request failed';
  try {
    const body = await res.json();
    if (body && typeof body.code === 'string') code = body.code;
    if (body && typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: keep the status
  }
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

export interface CallOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  /** Public routes: send no token and do not treat 401 as the end of the session. */
  anonymous?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Sees the headers of a successful answer (a link's pass, say). */
  onHeaders?: (headers: Headers) => void;
}

export function url(path: string, query?: CallOptions['query']): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return `/api${path}${qs ? `?${qs}` : ''}`;
}

/** One API call; resolves to the envelope's `data` (or the bare body where the API has no envelope). */
export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...(options.anonymous ? {} : authHeaders()), ...(options.headers ?? {}) };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url(path, options.query), {
    method,
    headers,
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    signal: options.signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!res.ok) {
    const error = await errorOf(res);
    if (res.status === 401 && !options.anonymous && error.code === 'UNAUTHENTICATED') {
      setToken(null);
      onUnauthenticated();
    }
    throw error;
  }
  options.onHeaders?.(res.headers);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  if (!text) return undefined as T;
  const body = JSON.parse(text);
  return (body && typeof body === 'object' && 'data' in body && 'status' in body ? body.data : body) as T;
}

export const api = {
  get: <T = any>(path: string, query?: CallOptions['query']) => call<T>('GET', path, { query }),
  post: <T = any>(path: string, body: unknown = {}) => call<T>('POST', path, { body }),
  put: <T = any>(path: string, body: unknown = {}) => call<T>('PUT', path, { body }),
  patch: <T = any>(path: string, body: unknown = {}) => call<T>('PATCH', path, { body }),
  del: <T = any>(path: string, query?: CallOptions['query']) => call<T>('DELETE', path, { query }),
};
