import type { AppContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { createUser, register, registration } from './register.use-case.js';
import { login, logout } from './sign-in.use-case.js';
import { createPersonalToken, listPersonalTokens, revokeToken } from './tokens.use-case.js';
import { lookup, me, setQuota } from './users.use-case.js';

export type { ClientInfo } from './accounts.sessions.js';
export { DEFAULT_BUCKET_NAME } from './register.use-case.js';
export { signInRules } from './sign-in.use-case.js';

/** The account service of a context: the use cases of accounts (one file each, `*.use-case.ts`) bound to it. */
export function accountService(ctx: AppContext) {
  return bindContext(ctx, {
    createUser,
    register,
    registration,
    login,
    logout,
    me,
    createPersonalToken,
    listPersonalTokens,
    revokeToken,
    lookup,
    setQuota,
  });
}

export type AccountService = ReturnType<typeof accountService>;
