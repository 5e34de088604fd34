import type { ResumableContent } from '../../content/index.js';
import { onePerContext, type AppContext } from '../../context.js';
import type { UploadRow } from './uploads.repository.js';

/**
 * Where an upload stands after this instance's last request to it. A PATCH answers once its bytes
 * are written, before they are durable, so its row cannot record them yet: the upload's next
 * request here carries on from this, and saves it once its sync is over (append-upload.use-case.ts).
 * The row then always holds a state that survives a crash; what the client was told beyond it is
 * lost in one, and HEAD elsewhere or after a restart says so (tus clients resume from HEAD).
 */
export interface LatestProgress {
  /** The row's tail when this was kept: it applies only to that row (no other request has moved it since). */
  rowTail: Buffer;
  content: ResumableContent;
  /** The upload's whole length, when known (a deferred one may have been declared by the request). */
  length: number | null;
  /** Settles once `content`'s bytes are durable (resolved at once when the row holds `content`). */
  durable: Promise<void>;
}

/** Uploads followed at once, at most: one forgotten sooner has its row a request behind (the client resends that much). */
const FOLLOWED = 256;

const latest = onePerContext(() => new Map<string, LatestProgress>());

/** This instance's latest progress of the upload in `row`, if it carries on from that row. */
export function latestProgress(ctx: AppContext, row: UploadRow): LatestProgress | undefined {
  const kept = latest(ctx).get(row.id);
  return kept && kept.rowTail.equals(Buffer.from(row.tail, 'base64')) ? kept : undefined;
}

/** The row as the upload stands here: its progress, or this instance's later one. */
export function asItStands(ctx: AppContext, row: UploadRow): UploadRow {
  const kept = latestProgress(ctx, row);
  return kept ? withProgress(row, kept) : row;
}

export function withProgress(row: UploadRow, { content, length }: LatestProgress): UploadRow {
  return { ...row, received: content.received, tail: content.tail.toString('base64'), staging: content.staging, length };
}

export function keepProgress(ctx: AppContext, id: string, progress: LatestProgress): void {
  const map = latest(ctx);
  map.delete(id);
  map.set(id, progress);
  // A Map iterates in insertion order: the first is the one followed longest.
  if (map.size > FOLLOWED) map.delete(map.keys().next().value!);
}

export function forgetProgress(ctx: AppContext, id: string): void {
  latest(ctx).delete(id);
}
