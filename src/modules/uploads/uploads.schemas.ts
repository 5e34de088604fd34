import { Type, type Static } from 'typebox';
import { idPattern } from '../../lib/ids.js';

export const UploadIdParams = Type.Object({ uploadId: Type.String({ pattern: idPattern('upl'), description: 'Id of the upload' }) });

export const UploadListItem = Type.Object({
  id: Type.String(),
  folderId: Type.String(),
  name: Type.String(),
  length: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes in all; null while deferred' }),
  offset: Type.Integer({ description: 'Bytes received so far' }),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});
export type UploadListItem = Static<typeof UploadListItem>;

export const UploadList = Type.Object({ uploads: Type.Array(UploadListItem) });
