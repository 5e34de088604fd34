import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestUser } from '../helper.js';

/** The password signUp gives every test user. */
export const TEST_PASSWORD = 'correct horse battery';

/** The Authorization header of HTTP Basic for a user (their e-mail and password, or another secret). */
export function basicAuth(user: Pick<TestUser, 'email'>, secret = TEST_PASSWORD): string {
  return `Basic ${Buffer.from(`${user.email}:${secret}`).toString('base64')}`;
}

export interface DavRequest {
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * A WebDAV client over `app.inject`, signed in with Basic as `user`. A path is relative to /dav/
 * (`default/a.txt`) or absolute (`/dav/default/a.txt`), sent as given (already encoded).
 */
export function davClient(app: FastifyInstance, user: Pick<TestUser, 'email'>, secret = TEST_PASSWORD) {
  return (method: string, path: string, request: DavRequest = {}): Promise<LightMyRequestResponse> =>
    app.inject({
      method: method as any,
      url: path.startsWith('/') ? path : `/dav/${path}`,
      headers: { authorization: basicAuth(user, secret), ...request.headers },
      ...(request.body !== undefined ? { payload: request.body } : {}),
    });
}

export type DavClient = ReturnType<typeof davClient>;

/** The hrefs of a multistatus body, decoded, in order. */
export function hrefs(body: string): string[] {
  return [...body.matchAll(/<d:href>([^<]*)<\/d:href>/g)].map((m) => decodeURIComponent(m[1]));
}

/** The text of the first `<d:name>` property in a body. */
export function davProp(body: string, name: string): string | undefined {
  return new RegExp(`<d:${name}>([^<]*)</d:${name}>`).exec(body)?.[1];
}

/** A DAV:lockinfo body asking for a write lock. */
export function lockInfo(scope: 'exclusive' | 'shared' = 'exclusive', owner = 'test suite'): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<d:lockinfo xmlns:d="DAV:">' +
    `<d:lockscope><d:${scope}/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>${owner}</d:owner></d:lockinfo>`
  );
}
