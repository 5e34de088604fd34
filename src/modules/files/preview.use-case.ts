import { loadFileFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { Sendable } from '../../lib/sendable.js';
import { readContent } from './download.use-case.js';
import { findLiveTokenById } from '../accounts/accounts.repository.js';
import { PREVIEW_TICKET_SECONDS, openTicket, sealTicket } from './preview-tickets.js';
import { TEXT_PLAIN, TEXT_PREVIEW_BYTES, previewTypeOf } from './preview-types.js';

/** A preview's content, and whether it is only the start of a longer text. */
export interface Preview {
  content: Sendable;
  truncated: boolean;
}

/**
 * A file (or one of its versions) to show in the browser, to a principal who may see it: the view
 * right is enough, that is the point of a preview. Its type comes from the allow-list of
 * preview-types.ts (415 outside it); a text is cut to its first TEXT_PREVIEW_BYTES.
 */
export async function preview(ctx: AppContext, principal: Principal, fileId: string, options: { versionId?: string }): Promise<Preview> {
  const file = await loadFileFor(ctx.db, principal, fileId, 'view');
  if (options.versionId) assertId('ver', options.versionId, 'versionId');
  const contentType = previewTypeOf(file.name);
  if (!contentType) throw new AppError('PREVIEW_NOT_SUPPORTED');
  const whole = await readContent(ctx, file, options.versionId);
  const truncated = contentType === TEXT_PLAIN && whole.size > TEXT_PREVIEW_BYTES;
  const size = truncated ? TEXT_PREVIEW_BYTES : whole.size;
  return {
    truncated,
    content: {
      ...whole,
      size,
      contentType,
      // Not the download's tag: a cut text is other bytes than the whole file.
      tag: `${whole.tag}.preview`,
      open: (span) => whole.open(span ?? (truncated ? { start: 0, end: size - 1 } : undefined)),
    },
  };
}

/** The key preview tickets are sealed with, derived once per context. */
const ticketKeys = new WeakMap<AppContext, Buffer>();
function ticketKey(ctx: AppContext): Buffer {
  let key = ticketKeys.get(ctx);
  if (!key) ticketKeys.set(ctx, (key = ctx.keyring.purposeKey('preview tickets')));
  return key;
}

/**
 * An address of a preview that works without the bearer token, for the web app's `<audio>` and
 * `<video>` (preview-tickets.ts): the same checks as the preview now, and again at each request.
 */
export async function previewAddress(ctx: AppContext, principal: Principal, fileId: string, options: { versionId?: string }) {
  const file = await loadFileFor(ctx.db, principal, fileId, 'view');
  if (options.versionId) assertId('ver', options.versionId, 'versionId');
  if (!previewTypeOf(file.name)) throw new AppError('PREVIEW_NOT_SUPPORTED');
  const expiresAt = Math.floor(Date.now() / 1000) + PREVIEW_TICKET_SECONDS;
  const versionId = options.versionId ?? '';
  const ticket = sealTicket(ticketKey(ctx), { tokenId: principal.tokenId, fileId: file.id, versionId, expiresAt });
  const query = new URLSearchParams(versionId ? { ticket, versionId } : { ticket });
  return { url: `/api/files/preview/${file.id}?${query}`, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

/**
 * The principal a preview ticket stands for, when it was sealed for this file and version, has
 * not expired, and its session is still live; otherwise 401.
 */
export async function principalOfTicket(
  ctx: AppContext,
  ticket: string,
  fileId: string,
  versionId: string | undefined,
): Promise<Principal> {
  const claims = openTicket(ticketKey(ctx), ticket, Math.floor(Date.now() / 1000));
  const session =
    claims && claims.fileId === fileId && claims.versionId === (versionId ?? '')
      ? await findLiveTokenById(ctx.db, claims.tokenId, new Date().toISOString())
      : undefined;
  if (!session) throw new AppError('UNAUTHENTICATED', 'This preview address has expired, was made for another file, or its session ended');
  return { userId: session.userId, tokenId: session.tokenId, email: session.email, name: session.name };
}
