import type { AppContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { grant, list, revoke } from './grants.use-case.js';
import { sharedWithMe } from './shared-with-me.use-case.js';

export type { ItemKind } from './permissions.repository.js';
export { MAX_GRANTEES } from './grants.use-case.js';

/** The permission service of a context: the use cases of permissions (one file each, `*.use-case.ts`) bound to it. */
export function permissionService(ctx: AppContext) {
  return bindContext(ctx, { grant, list, revoke, sharedWithMe });
}

export type PermissionService = ReturnType<typeof permissionService>;
