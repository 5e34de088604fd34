import { Type } from 'typebox';
import { LOW_STORAGE_PERCENT } from './storage.service.js';

export const StorageStatus = Type.Object(
  {
    capacity_bytes: Type.Number({
      description: "The account's quota in bytes (`COFFRE_DEFAULT_QUOTA_BYTES` unless set per account)",
      examples: [10737418240],
    }),
    used_bytes: Type.Number({
      description: 'Every version of every file not deleted for good, the trash included',
      examples: [1610612736],
    }),
    remaining_bytes: Type.Number({ description: 'max(0, capacity_bytes − used_bytes − in_progress_bytes)', examples: [9126805504] }),
    in_progress_bytes: Type.Number({
      description:
        'Bytes of uploads still arriving, held against the quota until each is stored (then counted in used_bytes) or fails (then given back)',
      examples: [0],
    }),
    warning: Type.Object({
      is_low: Type.Boolean({ description: `true when less than ${LOW_STORAGE_PERCENT} % of the capacity remains (or nothing at all)` }),
    }),
    readable: Type.Object(
      {
        capacity: Type.String({ examples: ['10 GB'] }),
        used: Type.String({ examples: ['1.5 GB'] }),
        remaining: Type.String({ examples: ['8.5 GB'] }),
        in_progress: Type.String({ examples: ['0 B'] }),
      },
      { description: 'The same sizes, 1024-based, units B KB MB GB TB PB, at most two decimals' },
    ),
  },
  {
    examples: [
      {
        capacity_bytes: 10737418240,
        used_bytes: 1610612736,
        remaining_bytes: 9126805504,
        in_progress_bytes: 0,
        warning: { is_low: false },
        readable: { capacity: '10 GB', used: '1.5 GB', remaining: '8.5 GB', in_progress: '0 B' },
      },
    ],
  },
);
