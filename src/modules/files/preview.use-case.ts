import { loadFileFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { Sendable } from '../../lib/sendable.js';
import { readContent } from './download.use-case.js';
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
