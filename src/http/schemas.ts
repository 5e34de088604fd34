import { Type } from 'typebox';

/** Schema pieces shared by the modules' request and response schemas. */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T13:17:04.123Z'] });

// Nullable and one-of-a-few values are written as `type: [..., 'null']` and `enum` rather than a
// union (`anyOf`): the response serializer picks an `anyOf` branch by validating the value against
// each one (a date-time format check for every timestamp it writes); requests validate the same.

/** A timestamp, or null. */
export const NullableTimestamp = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  examples: ['2026-11-22T13:17:04.123Z'],
});

/** Who may read an item without a share: its owner (and grantees) only, or anyone with its address. */
export const Visibility = Type.Unsafe<'private' | 'public'>({ type: 'string', enum: ['private', 'public'] });

/** `{en, fr}`: names of regions and locations in the languages the data file carries. */
export const LocalizedName = Type.Object(
  { en: Type.String({ examples: ['Paris'] }), fr: Type.String({ examples: ['Paris'] }) },
  { description: 'The name in English (`en`) and French (`fr`)' },
);

/** The page fields every paginated list carries next to its `data` (docs/api.md). */
export const PageFields = {
  total: Type.Integer({ description: 'Count of all matching items, every page included' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page' }),
};
