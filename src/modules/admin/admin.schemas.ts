import { Type, type Static } from 'typebox';
import { idPattern } from '../../lib/ids.js';
import { Email, Password, PersonName } from '../accounts/accounts.schemas.js';

const QuotaBytes = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
  description: "Bytes the account may store; null: the server's default (COFFRE_DEFAULT_QUOTA_BYTES)",
});

export const AdminUser = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    isAdmin: Type.Boolean(),
    disabled: Type.Boolean(),
    quotaBytes: Type.Integer({ description: 'The quota in force (the default when none is set)' }),
    customQuota: Type.Boolean({ description: "Whether the account has a quota of its own rather than the server's default" }),
    usedBytes: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    lastActiveAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Last use of one of its sessions or tokens',
    }),
  },
  { $id: 'AdminUser', title: 'AdminUser' },
);
export type AdminUser = Static<typeof AdminUser>;

export const UserIdParams = Type.Object({ userId: Type.String({ pattern: idPattern('usr') }) });
export const InvitationIdParams = Type.Object({ invitationId: Type.String({ pattern: idPattern('inv') }) });
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });

export const UpdateUserBody = Type.Object(
  {
    quotaBytes: Type.Optional(QuotaBytes),
    disabled: Type.Optional(Type.Boolean({ description: 'true: the account cannot sign in and its tokens stop working at once' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const InviteBody = Type.Object({ email: Email, quotaBytes: Type.Optional(QuotaBytes) }, { additionalProperties: false });

export const Invitation = Type.Object({
  id: Type.String(),
  purpose: Type.Union([Type.Literal('join'), Type.Literal('reset')]),
  email: Type.String(),
  quotaBytes: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
});
export type Invitation = Static<typeof Invitation>;

export const IssuedInvitation = Type.Intersect([
  Invitation,
  Type.Object({ invitationLink: Type.String({ description: 'The one-time link, shown in this response only: send it to the person' }) }),
]);

export const InvitationInfo = Type.Object({
  purpose: Type.Union([Type.Literal('join'), Type.Literal('reset')]),
  email: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const AcceptBody = Type.Object(
  { password: Password, name: Type.Optional(PersonName) },
  { additionalProperties: false, description: '`name` is required to join, ignored for a password reset' },
);
