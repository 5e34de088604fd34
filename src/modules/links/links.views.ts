import type { ShareLinkRow } from '../../db/schema.js';

/**
 * The first wrap of a link's key chain, which the sealed route sends anyway: with it a client tells
 * a wrong link key before it downloads (and spends an access); without the key it opens nothing.
 */
export function keyCheck(link: ShareLinkRow) {
  return { id: link.id, wrapped: link.key_wrapped };
}

/** A link's settings, as its creation answers them. */
export function summary(link: ShareLinkRow) {
  return {
    sharedHash: link.shared_hash,
    expiresAt: link.expires_at,
    maxAccess: Number(link.max_access),
    canView: link.can_view === 1,
    canDownload: link.can_download === 1,
    canEdit: link.can_edit === 1,
    isPublic: link.is_public === 1,
  };
}

/** A link as its owner lists it: settings and use, never the key. */
export function listing(link: ShareLinkRow) {
  return {
    ...summary(link),
    accessCount: Number(link.access_count),
    hasPassword: link.password_hash !== null,
    createdAt: link.created_at,
    updatedAt: link.updated_at,
  };
}
