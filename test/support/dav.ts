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

/** A WebDAV client over `app.inject`, signed in with Basic as `user`. Paths are relative to /dav/ and sent as given (already encoded). */
export function davClient(app: FastifyInstance, user: Pick<TestUser, 'email'>, secret = TEST_PASSWORD) {
  return (method: string, path: string, request: DavRequest = {}): Promise<LightMyRequestResponse> =>
    app.inject({
      method: method as any,
      url: `/dav/${path}`,
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
