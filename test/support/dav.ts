import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** The password signUp (test/helper.ts) gives every user: WebDAV clients sign in with it and the e-mail. */
const PASSWORD = 'correct horse battery';

export interface DavRequestOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A WebDAV client over `app.inject`, signed in with HTTP Basic as the user. */
export function davClient(app: FastifyInstance, user: { email: string }) {
  const authorization = `Basic ${Buffer.from(`${user.email}:${PASSWORD}`, 'utf8').toString('base64')}`;
  return (method: string, url: string, options: DavRequestOptions = {}): Promise<LightMyRequestResponse> =>
    app.inject({
      method: method as any,
      url,
      headers: { authorization, ...options.headers },
      ...(options.body !== undefined ? { payload: options.body } : {}),
    });
}

export type DavClient = ReturnType<typeof davClient>;

/** A DAV:lockinfo body asking for a write lock. */
export function lockInfo(scope: 'exclusive' | 'shared' = 'exclusive', owner = 'test suite'): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<d:lockinfo xmlns:d="DAV:">' +
    `<d:lockscope><d:${scope}/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>${owner}</d:owner></d:lockinfo>`
  );
}
