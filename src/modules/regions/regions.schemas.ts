import { Type } from 'typebox';
import { LocalizedName } from '../../http/schemas.js';

export const Region = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    slug: Type.String({ examples: ['europe'] }),
    name: LocalizedName,
    isActive: Type.Boolean({ description: 'false: no new datahub can be created in this region' }),
  },
  { $id: 'Region', title: 'Region', examples: [{ id: 1, slug: 'europe', name: { en: 'Europe', fr: 'Europe' }, isActive: true }] },
);

export const RegionLocation = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    regionId: Type.Integer({ description: 'id of the region', examples: [1] }),
    regionCode: Type.String({ description: 'location code', examples: ['fr-par'] }),
    countryCode: Type.String({ description: 'lower-case two-letter country code', examples: ['fr'] }),
    name: LocalizedName,
    isActive: Type.Boolean({ description: 'false: no new datahub can be created here' }),
  },
  {
    $id: 'RegionLocation',
    title: 'RegionLocation',
    examples: [{ id: 1, regionId: 1, regionCode: 'fr-par', countryCode: 'fr', name: { en: 'Paris', fr: 'Paris' }, isActive: true }],
  },
);

// Any integer the column can hold may name a region (unknown ones are 404); a number beyond that
// range is a 400 here rather than an out-of-range error in the database.
export const RegionIdParams = Type.Object({
  regionId: Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647, description: 'Integer id of a region', examples: [1] }),
});
