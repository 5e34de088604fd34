import type { AppContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { listUsers, updateUser } from './admin-users.use-case.js';
import {
  acceptInvitation,
  cancelInvitation,
  describeInvitation,
  invite,
  listInvitations,
  passwordResetLink,
} from './invitations.use-case.js';

/** The administration of accounts (administrators only) and the invitation links it hands out. */
export function adminService(ctx: AppContext) {
  return bindContext(ctx, {
    listUsers,
    updateUser,
    invite,
    passwordResetLink,
    listInvitations,
    cancelInvitation,
    describeInvitation,
    acceptInvitation,
  });
}

export type AdminService = ReturnType<typeof adminService>;
