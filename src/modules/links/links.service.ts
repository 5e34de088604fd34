import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Readable } from 'node:stream';
import { loadFileFor, loadFolderFor } from '../../access/access.js';
import { assertNotThrottled, consumeAttempt, type ThrottleRule } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
import { KeyUnwrapError, openChildKey } from '../../crypto/keyring.js';
import { unwrapKey, wrapKey } from '../../crypto/key-wrap.js';
import type { ByteRange } from '../../blobs/blob-store.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow, FolderRow, LinkPassRow, ShareLinkRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId, randomToken } from '../../lib/ids.js';
import { hashPassword, verifyPassword } from '../../lib/secrets.js';
import { parseRange } from '../../http/range.js';
import { formatSize } from '../../lib/size-format.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { findFile, findFileByHashName, findVersion } from '../files/files.repository.js';
import type { DownloadOptions, FileService } from '../files/files.service.js';
import { folderKey } from '../folders/folders.keys.js';
import { findFolder, keyChain } from '../folders/folders.repository.js';
import { keyCheckOf, keyProofOf, linkKeyBytes, proofMatches } from './links.key-proof.js';
import { LinkTransfer, endTransfer, findPass, newPass, passOpens, resumePass } from './links.passes.js';
import * as repo from './links.repository.js';

export type LinkKind = 'file' | 'folder';

/** What the sealed route sends: stored bytes (all, or `range` of `storedSize`) and the key chain. */
export interface SealedDownload {
  body: Readable;
  length: number;
  storedSize: number;
  range?: ByteRange;
  etag: string;
  name: string;
  keyIds: string[];
  keyChain: string[];
}


export interface LinkSettings {
  password?: string;
  expirationDays?: number;
  maxAccess?: number;
  canView?: boolean;
  canDownload?: boolean;
  canEdit?: boolean;
  isPublic?: boolean;
}

/** Who is asking on a public route: the secrets they sent, their address, and their token if any. */
export interface Visitor {
  password?: string;
  encryptionKey?: string;
  /** The link's key proof (links.key-proof.ts), from a client that keeps the key to itself. */
  keyProof?: string;
  hashName?: string;
  /** The resume pass of an earlier download (`x-coffre-pass`). */
  pass?: string;
  address: string;
  principal: Principal | null;
}

// Wrong passwords or keys on one link from one address: 10 per 15 minutes. Other addresses keep
// their own count, so one guesser cannot lock the link's real visitors out.
const GUESS_LIMIT = 10;
const GUESS_WINDOW_SECONDS = 15 * 60;
const FOLDER_LISTING_LIMIT = 1000;

/**
 * The first wrap of a link's key chain, which the sealed route sends anyway: with it a client tells
 * a wrong link key before it downloads (and spends an access); without the key it opens nothing.
 */
function keyCheck(link: ShareLinkRow) {
  return { id: link.id, wrapped: link.key_wrapped };
}

/** A link as its owner lists it: settings and use, never the key. */
function listing(link: ShareLinkRow) {
  return {
    ...summary(link),
    accessCount: Number(link.access_count),
    hasPassword: link.password_hash !== null,
    createdAt: link.created_at,
    updatedAt: link.updated_at,
  };
}

function summary(link: ShareLinkRow) {
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

/** Share links (API.md §5, DESIGN.md §3): the owner's management routes and the public routes. */
export function linkService(ctx: AppContext, files: FileService) {
  const { db, keyring, config, content } = ctx;

  async function loadItem(principal: Principal, kind: LinkKind, itemId: string): Promise<{ item: FileRow | FolderRow; key: Buffer }> {
    if (kind === 'file') {
      const file = await loadFileFor(db, principal, itemId, 'manage');
      if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
      return { item: file, key: openChildKey(await folderKey(db, keyring, file.folder_id), file.key_wrapped, file.id) };
    }
    const folder = await loadFolderFor(db, principal, itemId, 'manage');
    if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
    if (folder.is_root === 1) throw new AppError('ROOT_FOLDER_READONLY');
    if (folder.is_share === 0) throw new AppError('SHARING_DISABLED');
    return { item: folder, key: await folderKey(db, keyring, folder.id) };
  }

  async function create(principal: Principal, kind: LinkKind, itemId: string, input: LinkSettings) {
    const { item, key } = await loadItem(principal, kind, itemId);
    const linkKey = randomBytes(32);
    const id = newId('lnk');
    const now = nowIso();
    const row = {
      id,
      shared_hash: randomToken(16),
      kind,
      file_id: kind === 'file' ? item.id : null,
      folder_id: kind === 'folder' ? item.id : null,
      owner_id: principal.userId,
      key_wrapped: wrapKey(linkKey, key, id),
      password_hash: input.password ? await hashPassword(input.password) : null,
      expires_at: input.expirationDays ? isoPlus(now, input.expirationDays * DAY_MS) : null,
      max_access: input.maxAccess ?? 0,
      can_view: input.canView === false ? 0 : 1,
      can_download: input.canDownload === false ? 0 : 1,
      can_edit: input.canEdit ? 1 : 0,
      is_public: input.isPublic === false ? 0 : 1,
      revoked_at: null,
      key_check: keyCheckOf(keyProofOf(linkKey)),
      created_at: now,
      updated_at: now,
    };
    await repo.insertLink(db, row);
    // The only place the link key exists: this response. It is not stored and not logged.
    return { shareLink: `${config.publicUrl}/s/${row.shared_hash}#${linkKey.toString('base64url')}`, ...summary(row as ShareLinkRow) };
  }

  async function list(principal: Principal, kind: LinkKind, itemId: string) {
    const item = kind === 'file' ? await loadFileFor(db, principal, itemId, 'manage') : await loadFolderFor(db, principal, itemId, 'manage');
    return (await repo.liveLinksOf(db, kind, item.id)).map(listing);
  }

  /** A link of the caller's, of this kind; anyone else's (or a revoked one) is unknown. */
  async function ownLink(principal: Principal, kind: LinkKind, sharedHash: string): Promise<ShareLinkRow> {
    const link = await repo.findLinkByHash(db, sharedHash);
    if (!link || link.kind !== kind || link.owner_id !== principal.userId || link.revoked_at) throw new AppError('LINK_NOT_FOUND');
    return link;
  }

  async function update(principal: Principal, kind: LinkKind, sharedHash: string, input: Pick<LinkSettings, 'password' | 'expirationDays' | 'maxAccess' | 'canDownload'>) {
    if (input.password === undefined && input.expirationDays === undefined && input.maxAccess === undefined && input.canDownload === undefined) {
      throw new AppError('EMPTY_UPDATE', undefined, [{ field: 'body', problem: 'give password, expirationDays, maxAccess or canDownload' }]);
    }
    const link = await ownLink(principal, kind, sharedHash);
    const now = nowIso();
    const changes = {
      ...(input.password !== undefined ? { password_hash: input.password === '' ? null : await hashPassword(input.password) } : {}),
      ...(input.expirationDays !== undefined ? { expires_at: input.expirationDays === 0 ? null : isoPlus(now, input.expirationDays * DAY_MS) } : {}),
      ...(input.maxAccess !== undefined ? { max_access: input.maxAccess } : {}),
      ...(input.canDownload !== undefined ? { can_download: input.canDownload ? 1 : 0 } : {}),
      updated_at: now,
    };
    await repo.updateLink(db, link.id, changes);
    return listing({ ...link, ...changes });
  }

  async function revoke(principal: Principal, kind: LinkKind, sharedHash: string): Promise<void> {
    const link = await ownLink(principal, kind, sharedHash);
    const now = nowIso();
    await repo.updateLink(db, link.id, { revoked_at: now, updated_at: now });
  }

  // ---- public side ----

  /** The 410 that describes why a link no longer opens, or null while it does (a pass gets past the limit). */
  function closedReason(link: ShareLinkRow, now: string, passOpen = false): AppError | null {
    if (link.revoked_at) return new AppError('LINK_REVOKED');
    if (link.expires_at && link.expires_at <= now) return new AppError('LINK_EXPIRED');
    if (!passOpen && exhausted(link)) return new AppError('LINK_EXHAUSTED');
    return null;
  }

  function exhausted(link: ShareLinkRow): boolean {
    return Number(link.max_access) > 0 && Number(link.access_count) >= Number(link.max_access);
  }

  /**
   * Finds a link and checks, in order: it exists (404), it is open (410), a non-public link's
   * visitor is signed in (401), the password (401 missing / 403 wrong, throttled per address).
   */
  async function admit(sharedHash: string, visitor: Visitor, kind?: LinkKind): Promise<{ link: ShareLinkRow; rules: ThrottleRule[]; pass?: LinkPassRow }> {
    const link = await repo.findLinkByHash(db, sharedHash);
    if (!link || (kind && link.kind !== kind)) throw new AppError('LINK_NOT_FOUND');
    const now = nowIso();
    const found = visitor.pass && link.kind === 'file' ? await findPass(db, visitor.pass) : undefined;
    const pass = found && found.link_id === link.id && passOpens(found, now) ? found : undefined;
    const closed = closedReason(link, now, pass !== undefined);
    if (closed) throw closed;
    if (link.is_public === 0 && !visitor.principal) throw new AppError('UNAUTHENTICATED');
    const rules = [{ key: `link:${link.id}:${visitor.address}`, limit: GUESS_LIMIT, windowSeconds: GUESS_WINDOW_SECONDS }];
    if (link.password_hash) {
      if (!visitor.password) throw new AppError('PASSWORD_REQUIRED');
      await assertNotThrottled(db, rules);
      if (!(await verifyPassword(link.password_hash, visitor.password))) await refuse(rules, 'INVALID_PASSWORD');
    }
    return { link, rules, pass };
  }

  /** Counts a wrong guess; past the limit the answer becomes 429 instead of `code`. */
  async function refuse(rules: ThrottleRule[], code: 'INVALID_PASSWORD' | 'INVALID_ENCRYPTION_KEY'): Promise<never> {
    await consumeAttempt(db, rules);
    throw new AppError(code);
  }

  /** Counts one access, or explains (410) why the link closed since it was read. */
  async function countAccess(link: ShareLinkRow, trx: DbOrTrx = db): Promise<void> {
    const now = nowIso();
    if (await repo.takeAccess(trx, link.id, now)) return;
    const fresh = await repo.findLinkByHash(trx, link.shared_hash);
    throw (fresh && closedReason(fresh, now)) || new AppError('LINK_EXHAUSTED');
  }

  /**
   * Holds an access of a file link for one transfer of `versionId`: on the pass the visitor sent
   * back when it covers the transfer, else on a new one (a reservation). The route settles it.
   */
  async function holdAccess(link: ShareLinkRow, versionId: string, visitor: Visitor, transfer: LinkTransfer): Promise<void> {
    const now = nowIso();
    const reserve = (trx: DbOrTrx) => countAccess(link, trx);
    const resumed = visitor.pass ? await resumePass(db, visitor.pass, link.id, versionId, now, reserve) : null;
    transfer.hold(resumed ?? (await newPass(db, link.id, versionId, now, reserve)));
  }

  /**
   * Refuses (403, throttled like a wrong key) a visitor whose link key or key proof does not
   * match the link, before anything is counted. `proofRequired`: the sealed route, where the
   * proof is the only sign of the key (links made before key checks have none to compare).
   */
  async function checkKey(link: ShareLinkRow, visitor: Visitor, rules: ThrottleRule[], proofRequired = false): Promise<void> {
    const { encryptionKey, keyProof } = visitor;
    const proofAsked = link.key_check !== null && (proofRequired || keyProof !== undefined);
    if (encryptionKey === undefined && !proofAsked) return;
    await assertNotThrottled(db, rules);
    if (proofAsked && !proofMatches(link.key_check!, keyProof)) await refuse(rules, 'INVALID_ENCRYPTION_KEY');
    if (encryptionKey === undefined) return;
    try {
      unwrapKey(linkKeyBytes(encryptionKey), link.key_wrapped, link.id);
    } catch (error) {
      if (error instanceof KeyUnwrapError) await refuse(rules, 'INVALID_ENCRYPTION_KEY');
      throw error;
    }
  }

  async function liveFileOf(link: ShareLinkRow): Promise<FileRow> {
    const file = await findFile(db, link.file_id!);
    if (!file || file.trash_batch !== '' || !file.current_version_id) throw new AppError('LINK_NOT_FOUND');
    return file;
  }

  async function liveFolderOf(link: ShareLinkRow): Promise<FolderRow> {
    const folder = await findFolder(db, link.folder_id!);
    if (!folder || folder.trash_batch !== '') throw new AppError('LINK_NOT_FOUND');
    return folder;
  }

  async function fileInfo(sharedHash: string, visitor: Visitor) {
    const { link, pass } = await admit(sharedHash, visitor, 'file');
    if (link.can_view === 0) throw new AppError('VIEW_NOT_ALLOWED');
    const file = await liveFileOf(link);
    // A pass covers the version it was handed out for, not a newer one.
    if (pass && pass.version_id !== file.current_version_id && exhausted(link)) throw new AppError('LINK_EXHAUSTED');
    const max = Number(link.max_access);
    return {
      name: file.name,
      size: Number(file.size),
      contentType: file.content_type,
      createdAt: file.created_at,
      updatedAt: file.updated_at,
      expiresAt: link.expires_at,
      maxAccess: max,
      remainingAccess: max === 0 ? null : Math.max(0, max - Number(link.access_count)),
      canDownload: link.can_download === 1,
      keyCheck: keyCheck(link),
    };
  }

  async function openFolder(sharedHash: string, visitor: Visitor) {
    const { link, rules } = await admit(sharedHash, visitor, 'folder');
    if (link.can_view === 0) throw new AppError('VIEW_NOT_ALLOWED');
    const folder = await liveFolderOf(link);
    await checkKey(link, visitor, rules);
    await countAccess(link);
    const rows = await sql<{ hash_name: string; name: string; size: number; content_type: string; created_at: string; path: string }>`
      with recursive sub (id, path, depth) as (
        select id, cast('' as text), 0 from folders where id = ${folder.id}
        union all
        select c.id, sub.path || '/' || c.name, sub.depth + 1 from folders c join sub on c.parent_id = sub.id
        where c.trash_batch = '' and sub.depth < 64
      )
      select f.hash_name, f.name, f.size, f.content_type, f.created_at, sub.path
      from files f join sub on f.folder_id = sub.id
      where f.trash_batch = '' and f.current_version_id is not null
      order by sub.path, f.name, f.id
      limit ${FOLDER_LISTING_LIMIT}
    `.execute(db);
    return {
      folder: { id: folder.id, name: folder.name, createdAt: folder.created_at, updatedAt: folder.updated_at },
      files: rows.rows.map((r) => ({ hashName: r.hash_name, name: r.name, size: Number(r.size), contentType: r.content_type, createdAt: r.created_at, path: r.path || '/' })),
      totalFiles: Number(folder.subtree_files),
      totalSizeByte: Number(folder.subtree_bytes),
      totalSizeReadable: formatSize(Number(folder.subtree_bytes)),
      expiresAt: link.expires_at,
      canDownload: link.can_download === 1,
      keyCheck: keyCheck(link),
    };
  }

  /**
   * The file a download through `link` serves, and the wraps from the link's item down to the
   * file key: none for a file link; for a folder link, the subfolders between the shared folder
   * and the file's folder, then the file key. A file outside the shared tree is not found.
   */
  async function fileOfLink(link: ShareLinkRow, hashName: string | undefined): Promise<{ file: FileRow; wraps: { id: string; wrapped: string }[] }> {
    if (link.kind === 'file') return { file: await liveFileOf(link), wraps: [] };
    if (!hashName) throw new AppError('VALIDATION_FAILED', 'Give the hashName of a file of the shared folder', [{ field: 'body.hashName', problem: 'required for a folder link' }]);
    await liveFolderOf(link);
    const file = await findFileByHashName(db, hashName);
    if (!file || file.trash_batch !== '' || !file.current_version_id) throw new AppError('FILE_NOT_FOUND');
    const chain = await keyChain(db, file.folder_id);
    const at = chain ? chain.folders.findIndex((f) => f.id === link.folder_id) : -1;
    if (!chain || at < 0) throw new AppError('FILE_NOT_FOUND');
    const wraps = chain.folders.slice(at + 1).map((f) => ({ id: f.id, wrapped: f.key_wrapped }));
    wraps.push({ id: file.id, wrapped: file.key_wrapped });
    return { file, wraps };
  }

  /** Checks everything a content request needs, counts the access, and returns the file and its wraps. */
  async function authorizeContent(sharedHash: string, visitor: Visitor) {
    const admitted = await admit(sharedHash, visitor);
    const { link } = admitted;
    if (link.can_download === 0) throw new AppError('DOWNLOAD_NOT_ALLOWED');
    const target = await fileOfLink(link, visitor.hashName);
    // Only file links count downloads; a folder link counts its opens (API.md §5).
    return { ...admitted, ...target };
  }

  async function download(sharedHash: string, visitor: Visitor, options: DownloadOptions, transfer: LinkTransfer) {
    const { link, rules, file, wraps } = await authorizeContent(sharedHash, visitor);
    let key: Buffer;
    try {
      // Public routes never touch the master key: everything opens from the client's link key.
      await assertNotThrottled(db, rules);
      key = unwrapKey(linkKeyBytes(visitor.encryptionKey), link.key_wrapped, link.id);
      for (const wrap of wraps) key = openChildKey(key, wrap.wrapped, wrap.id);
    } catch (error) {
      if (error instanceof KeyUnwrapError) return refuse(rules, 'INVALID_ENCRYPTION_KEY');
      throw error;
    }
    // The key opened the chain before anything is held: a visitor without it spends nothing.
    if (link.kind === 'file') await holdAccess(link, file.current_version_id!, visitor, transfer);
    return files.linkDownload(file, key, options);
  }

  /**
   * The stored ciphertext and the wrapped keys from the link key down to its data key, for a
   * browser that decrypts it itself: the link key never reaches the server on this route.
   */
  async function sealed(sharedHash: string, visitor: Visitor, options: Pick<DownloadOptions, 'range' | 'ifRange'>, transfer: LinkTransfer): Promise<SealedDownload> {
    const { link, rules, file, wraps } = await authorizeContent(sharedHash, visitor);
    await checkKey(link, visitor, rules, true);
    const version = await findVersion(db, file.id, file.current_version_id!);
    if (!version) throw new AppError('VERSION_NOT_FOUND');
    if (link.kind === 'file') await holdAccess(link, version.id, visitor, transfer);
    const etag = `"${version.id}.sealed"`;
    // Ranges are of the stored bytes; If-Range with another validator gets the whole (new) version.
    const pickRange = (storedSize: number): ByteRange | undefined => {
      if (options.ifRange && options.ifRange !== etag) return undefined;
      const range = parseRange(options.range, storedSize);
      if (range.kind === 'unsatisfiable') throw new AppError('RANGE_NOT_SATISFIABLE', undefined, undefined, { 'content-range': `bytes */${storedSize}` });
      return range.kind === 'range' ? range : undefined;
    };
    const stored = { id: version.id, blobId: version.blob_id, size: Number(version.size), dataKeyWrapped: version.data_key_wrapped };
    const opened = await content.sealed(stored, [{ id: link.id, wrapped: link.key_wrapped }, ...wraps], pickRange);
    const { keyChain } = opened;
    return { body: opened.stream, length: opened.length, storedSize: opened.storedSize, range: opened.range, etag, name: file.name, keyIds: keyChain.map((c) => c.id), keyChain: keyChain.map((c) => c.wrapped) };
  }

  /** A transfer of a request whose pass (if any) `endTransfer` settles when the response ends. */
  function transfer(onError: (error: unknown) => void): LinkTransfer {
    return new LinkTransfer((pass, delivered) => endTransfer(db, pass, delivered, nowIso()).catch(onError));
  }

  return { create, list, update, revoke, fileInfo, openFolder, download, sealed, transfer };
}
