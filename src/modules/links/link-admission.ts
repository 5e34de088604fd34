import { assertNotThrottled, consumeAttempt, type ThrottleRule } from '../../access/throttle.js';
import { KeyUnwrapError, openChildKey } from '../../crypto/keyring.js';
import { unwrapKey } from '../../crypto/key-wrap.js';
import type { Db, DbOrTrx } from '../../db/database.js';
import type { FileRow, FolderRow, LinkPassRow, ShareLinkRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { verifyPassword } from '../../lib/secrets.js';
import { nowIso } from '../../lib/time.js';
import { findFile, findFileByHashName } from '../files/files.repository.js';
import { findFolder } from '../folders/folders.repository.js';
import { keyChain } from '../folders/key-chain.repository.js';
import { linkKeyBytes, proofMatches } from './links.key-proof.js';
import { LinkTransfer, findPass, newPass, passOpens, resumePass } from './links.passes.js';
import * as repo from './links.repository.js';
import type { LinkKind, Visitor } from './links.types.js';

// Wrong passwords or keys on one link from one address: 10 per 15 minutes. Other addresses keep
// their own count, so one guesser cannot lock the link's real visitors out.
const GUESS_LIMIT = 10;
const GUESS_WINDOW_SECONDS = 15 * 60;

export interface Admitted {
  link: ShareLinkRow;
  rules: ThrottleRule[];
  /** The visitor's resume pass, when it is this link's and still opens it. */
  pass?: LinkPassRow;
}

/**
 * Finds a link and checks, in order: it exists (404), it is open (410; a valid pass gets past the
 * access limit), a non-public link's visitor is signed in (401), the password (401 missing / 403
 * wrong, throttled per address).
 */
export async function admit(db: Db, sharedHash: string, visitor: Visitor, kind?: LinkKind): Promise<Admitted> {
  const link = await repo.findLinkByHash(db, sharedHash);
  if (!link || (kind && link.kind !== kind)) throw new AppError('LINK_NOT_FOUND');
  const now = nowIso();
  const found = visitor.pass ? await findPass(db, visitor.pass) : undefined;
  const pass = found && found.link_id === link.id && passOpens(found, now) ? found : undefined;
  const closed = closedReason(link, now, pass !== undefined);
  if (closed) throw closed;
  if (link.is_public === 0 && !visitor.principal) throw new AppError('UNAUTHENTICATED');
  const rules = [{ key: `link:${link.id}:${visitor.address}`, limit: GUESS_LIMIT, windowSeconds: GUESS_WINDOW_SECONDS }];
  if (link.password_hash) {
    if (!visitor.password) throw new AppError('PASSWORD_REQUIRED');
    await assertNotThrottled(db, rules);
    if (!(await verifyPassword(link.password_hash, visitor.password))) await refuse(db, rules, 'INVALID_PASSWORD');
  }
  return { link, rules, pass };
}

/** Whether the link's accesses are all spent. */
export function exhausted(link: ShareLinkRow): boolean {
  return Number(link.max_access) > 0 && Number(link.access_count) >= Number(link.max_access);
}

/** The 410 that describes why a link no longer opens, or null while it does (a pass gets past the limit). */
function closedReason(link: ShareLinkRow, now: string, passOpen = false): AppError | null {
  if (link.revoked_at) return new AppError('LINK_REVOKED');
  if (link.expires_at && link.expires_at <= now) return new AppError('LINK_EXPIRED');
  if (!passOpen && exhausted(link)) return new AppError('LINK_EXHAUSTED');
  return null;
}

/** Counts a wrong guess; past the limit the answer becomes 429 instead of `code`. */
export async function refuse(db: Db, rules: ThrottleRule[], code: 'INVALID_PASSWORD' | 'INVALID_ENCRYPTION_KEY'): Promise<never> {
  await consumeAttempt(db, rules);
  throw new AppError(code);
}

/** Counts one access, or explains (410) why the link closed since it was read. */
export async function countAccess(db: DbOrTrx, link: ShareLinkRow): Promise<void> {
  const now = nowIso();
  if (await repo.takeAccess(db, link.id, now)) return;
  const fresh = await repo.findLinkByHash(db, link.shared_hash);
  throw (fresh && closedReason(fresh, now)) || new AppError('LINK_EXHAUSTED');
}

/**
 * Holds an access of a file link for one transfer of `versionId`: on the pass the visitor sent
 * back when it covers the transfer, else on a new one (a reservation). The route settles it.
 */
export async function holdAccess(db: Db, link: ShareLinkRow, versionId: string, visitor: Visitor, transfer: LinkTransfer): Promise<void> {
  const now = nowIso();
  const reserve = (trx: DbOrTrx) => countAccess(trx, link);
  const resumed = visitor.pass ? await resumePass(db, visitor.pass, link.id, versionId, now, reserve) : null;
  transfer.hold(resumed ?? (await newPass(db, link.id, versionId, now, reserve)));
}

/**
 * Refuses (403, throttled like a wrong key) a visitor whose link key or key proof does not
 * match the link, before anything is counted. `proofRequired`: the sealed route, where the
 * proof is the only sign of the key (links made before key checks have none to compare).
 */
export async function checkKey(db: Db, link: ShareLinkRow, visitor: Visitor, rules: ThrottleRule[], proofRequired = false): Promise<void> {
  const { encryptionKey, keyProof } = visitor;
  const proofAsked = link.key_check !== null && (proofRequired || keyProof !== undefined);
  if (encryptionKey === undefined && !proofAsked) return;
  await assertNotThrottled(db, rules);
  if (proofAsked && !proofMatches(link.key_check!, keyProof)) await refuse(db, rules, 'INVALID_ENCRYPTION_KEY');
  if (encryptionKey === undefined) return;
  try {
    unwrapKey(linkKeyBytes(encryptionKey), link.key_wrapped, link.id);
  } catch (error) {
    if (error instanceof KeyUnwrapError) await refuse(db, rules, 'INVALID_ENCRYPTION_KEY');
    throw error;
  }
}

/**
 * The key of the link's item, unwrapped with the visitor's link key, then down `wraps` (to a file
 * of a folder link). A key that does not open the chain is refused like a wrong password
 * (throttled); public routes never touch the master key.
 */
export async function unwrapWithLinkKey(
  db: Db,
  link: ShareLinkRow,
  visitor: Visitor,
  rules: ThrottleRule[],
  wraps: { id: string; wrapped: string }[] = [],
): Promise<Buffer> {
  try {
    await assertNotThrottled(db, rules);
    let key = unwrapKey(linkKeyBytes(visitor.encryptionKey), link.key_wrapped, link.id);
    for (const wrap of wraps) key = openChildKey(key, wrap.wrapped, wrap.id);
    return key;
  } catch (error) {
    if (error instanceof KeyUnwrapError) return refuse(db, rules, 'INVALID_ENCRYPTION_KEY');
    throw error;
  }
}

/** The live file of a file link (trashed or emptied: the link finds nothing). */
export async function liveFileOf(db: Db, link: ShareLinkRow): Promise<FileRow> {
  const file = await findFile(db, link.file_id!);
  if (!file || file.trash_batch !== '' || !file.current_version_id) throw new AppError('LINK_NOT_FOUND');
  return file;
}

/** The live folder of a folder link. */
export async function liveFolderOf(db: Db, link: ShareLinkRow): Promise<FolderRow> {
  const folder = await findFolder(db, link.folder_id!);
  if (!folder || folder.trash_batch !== '') throw new AppError('LINK_NOT_FOUND');
  return folder;
}

export interface LinkContent extends Admitted {
  file: FileRow;
  /** The wraps from the link's item down to the file key (see fileOfLink). */
  wraps: { id: string; wrapped: string }[];
}

/** Checks everything a content request needs and returns the file and its wraps; nothing is counted yet. */
export async function authorizeContent(db: Db, sharedHash: string, visitor: Visitor): Promise<LinkContent> {
  const admitted = await admit(db, sharedHash, visitor);
  if (admitted.link.can_download === 0) throw new AppError('DOWNLOAD_NOT_ALLOWED');
  return { ...admitted, ...(await fileOfLink(db, admitted.link, visitor.hashName)) };
}

/**
 * The file a download through `link` serves, and the wraps from the link's item down to the
 * file key: none for a file link; for a folder link, the subfolders between the shared folder
 * and the file's folder, then the file key. A file outside the shared tree is not found.
 */
async function fileOfLink(db: Db, link: ShareLinkRow, hashName: string | undefined): Promise<Pick<LinkContent, 'file' | 'wraps'>> {
  if (link.kind === 'file') return { file: await liveFileOf(db, link), wraps: [] };
  if (!hashName)
    throw new AppError('VALIDATION_FAILED', 'Give the hashName of a file of the shared folder', [
      { field: 'body.hashName', problem: 'required for a folder link' },
    ]);
  await liveFolderOf(db, link);
  const file = await findFileByHashName(db, hashName);
  if (!file || file.trash_batch !== '' || !file.current_version_id) throw new AppError('FILE_NOT_FOUND');
  const chain = await keyChain(db, file.folder_id);
  const at = chain ? chain.folders.findIndex((f) => f.id === link.folder_id) : -1;
  if (!chain || at < 0) throw new AppError('FILE_NOT_FOUND');
  const wraps = chain.folders.slice(at + 1).map((f) => ({ id: f.id, wrapped: f.key_wrapped }));
  wraps.push({ id: file.id, wrapped: file.key_wrapped });
  return { file, wraps };
}
