import { Type, type Static } from 'typebox';
import { NullableTimestamp } from '../../http/schemas.js';
import { idPattern } from '../../lib/ids.js';

export const Email = Type.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] });
export const Password = Type.String({ minLength: 8, maxLength: 1024, description: 'At least 8 characters' });
export const PersonName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', examples: ['Ada Lovelace'] });

export const User = Type.Object(
  {
    id: Type.String({ examples: ['usr_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
    email: Type.String(),
    name: Type.String(),
    defaultDatahubId: Type.Union([Type.String(), Type.Null()]),
    defaultBucketId: Type.Union([Type.String(), Type.Null()]),
    quotaBytes: Type.Integer(),
    isAdmin: Type.Boolean({
      description: 'An administrator of this server (the first account is one): manages the accounts under /admin/',
    }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'User', title: 'User' },
);
export type User = Static<typeof User>;

export const Session = Type.Object({
  user: Type.Ref('User'),
  accessToken: Type.String({ description: 'Bearer token; send as `Authorization: Bearer <token>`' }),
  expiresAt: Type.String({ format: 'date-time' }),
});
/** A new session: `user` is written by reference to User, so the type names it. */
export type Session = Omit<Static<typeof Session>, 'user'> & { user: User };

export const RegisterBody = Type.Object({ email: Email, password: Password, name: PersonName });
export const LoginBody = Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 1024 }) });

const personalTokenFields = {
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: NullableTimestamp,
  lastUsedAt: NullableTimestamp,
};
export const PersonalToken = Type.Object(personalTokenFields);
export type PersonalToken = Static<typeof PersonalToken>;
export const NewPersonalToken = Type.Object({ ...personalTokenFields, token: Type.String({ description: 'Shown once; store it safely' }) });
export const CreateTokenBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Omit for a token that does not expire' })),
});
export const TokenIdParams = Type.Object({ tokenId: Type.String({ pattern: idPattern('tok') }) });
export const LookupQuery = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) });
export const UserSummary = Type.Object({ id: Type.String(), name: Type.String() });

export const SessionInfo = Type.Object({
  id: Type.String({ description: 'Revoke with `DELETE /auth/sessions/{id}`' }),
  device: Type.String({
    description: 'Guessed from the User-Agent of the sign-in, e.g. "Firefox on Linux"',
    examples: ['Firefox on Linux'],
  }),
  userAgent: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
  clientAddress: Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'The address the session signed in from' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: NullableTimestamp,
  expiresAt: NullableTimestamp,
  current: Type.Boolean({ description: 'The session this request was made with' }),
});
export type SessionInfo = Static<typeof SessionInfo>;
export const SessionIdParams = Type.Object({ sessionId: Type.String({ pattern: idPattern('tok') }) });
export const ChangePasswordBody = Type.Object({ currentPassword: Type.String({ maxLength: 1024 }), newPassword: Password });
export const PasswordChanged = Type.Object({ revokedSessions: Type.Integer({ description: 'How many other sessions were signed out' }) });
