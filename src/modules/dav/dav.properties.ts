import type { Element } from '@xmldom/xmldom';
import type { DbOrTrx } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { DAV_NS, childElements, clark, clarkOf, davChild, emptyProperty, escapeXml, isDav, property } from './dav.xml.js';

/** Properties of WebDAV resources: the live ones we compute, the dead ones clients store. */

/** One resource of a PROPFIND answer, as its properties are computed from it. */
export interface DavEntry {
  href: string;
  collection: boolean;
  displayName: string;
  /** The file or folder behind it (dead properties and locks are kept by item); none for virtual collections. */
  itemId?: string;
  size?: number;
  contentType?: string;
  /** The strong entity tag, quotes included. */
  etag?: string;
  createdAt?: string;
  modifiedAt?: string;
}

/** The caller's storage as RFC 4331 reports it, equal to /api/storage/status. */
export interface QuotaFigures {
  used: number;
  available: number;
}

const d = (local: string) => clark(DAV_NS, local);

/** Live properties a client cannot set (PROPPATCH on them is 403 cannot-modify-protected-property). */
export const PROTECTED = new Set(
  [
    'resourcetype',
    'getcontentlength',
    'getcontenttype',
    'getetag',
    'getlastmodified',
    'creationdate',
    'lockdiscovery',
    'supportedlock',
    'quota-available-bytes',
    'quota-used-bytes',
  ].map(d),
);

/** What `allprop` returns of the live properties (RFC 4331's quota properties only when asked by name). */
const ALLPROP_LIVE = [
  'resourcetype',
  'displayname',
  'creationdate',
  'getlastmodified',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'supportedlock',
  'lockdiscovery',
].map(d);

const SUPPORTED_LOCK =
  '<d:lockentry><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>' +
  '<d:lockentry><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>';

type Extras = { quota?: QuotaFigures; lockDiscovery?: string };

/** How each live property is written from an entry, by Clark name (undefined: the entry has none). */
const LIVE = new Map<string, (entry: DavEntry, extras: Extras) => string | undefined>([
  [d('resourcetype'), (entry) => (entry.collection ? '<d:collection/>' : '')],
  [d('displayname'), (entry) => escapeXml(entry.displayName)],
  [d('creationdate'), (entry) => entry.createdAt && new Date(entry.createdAt).toISOString()],
  [d('getlastmodified'), (entry) => entry.modifiedAt && new Date(entry.modifiedAt).toUTCString()],
  [d('getcontentlength'), (entry) => (entry.collection ? undefined : String(entry.size ?? 0))],
  [d('getcontenttype'), (entry) => (entry.collection ? undefined : escapeXml(entry.contentType ?? 'application/octet-stream'))],
  [d('getetag'), (entry) => entry.etag && escapeXml(entry.etag)],
  [d('supportedlock'), (entry) => (entry.itemId ? SUPPORTED_LOCK : undefined)],
  [d('lockdiscovery'), (entry, extras) => (entry.itemId ? (extras.lockDiscovery ?? '') : undefined)],
  [d('quota-used-bytes'), (entry, extras) => (entry.collection && extras.quota ? String(extras.quota.used) : undefined)],
  [d('quota-available-bytes'), (entry, extras) => (entry.collection && extras.quota ? String(extras.quota.available) : undefined)],
]);

/** The value of one live property of an entry as XML content, or undefined when it has none. */
export function liveProperty(entry: DavEntry, name: string, extras: Extras): string | undefined {
  return LIVE.get(name)?.(entry, extras);
}

/** The live property names an entry has (for propname). */
function liveNames(entry: DavEntry, extras: Extras): string[] {
  return [...ALLPROP_LIVE, d('quota-used-bytes'), d('quota-available-bytes')].filter(
    (name) => liveProperty(entry, name, extras) !== undefined,
  );
}

/** What a PROPFIND asks for. */
export type PropfindRequest = { kind: 'allprop'; include: string[] } | { kind: 'propname' } | { kind: 'prop'; names: string[] };

/** Reads a PROPFIND body (none means allprop, RFC 4918 §9.1). */
export function propfindRequest(root: Element | null): PropfindRequest {
  if (!root) return { kind: 'allprop', include: [] };
  if (!isDav(root, 'propfind')) throw new AppError('DAV_MALFORMED_XML', 'A PROPFIND body is a DAV:propfind element');
  const prop = davChild(root, 'prop');
  if (prop) return { kind: 'prop', names: childElements(prop).map(clarkOf) };
  if (davChild(root, 'propname')) return { kind: 'propname' };
  if (davChild(root, 'allprop')) {
    const include = davChild(root, 'include');
    return { kind: 'allprop', include: include ? childElements(include).map(clarkOf) : [] };
  }
  throw new AppError('DAV_MALFORMED_XML', 'A DAV:propfind holds prop, propname or allprop');
}

/** The dead properties of items, by item id then name: the stored XML of each property element. */
export async function deadProperties(db: DbOrTrx, itemIds: string[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  const CHUNK = 500;
  for (let i = 0; i < itemIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('dav_properties')
      .select(['item_id', 'name', 'value'])
      .where('item_id', 'in', itemIds.slice(i, i + CHUNK))
      .execute();
    for (const row of rows) {
      const map = out.get(row.item_id) ?? new Map<string, string>();
      map.set(row.name, row.value);
      out.set(row.item_id, map);
    }
  }
  return out;
}

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 424: 'Failed Dependency' };

/** One propstat block: the properties (already written) that share a status. */
export function propstat(status: number, props: string[]): string {
  if (props.length === 0) return '';
  return `<d:propstat><d:prop>${props.join('')}</d:prop><d:status>HTTP/1.1 ${status} ${STATUS_TEXT[status]}</d:status></d:propstat>`;
}

/** The properties a PROPFIND asked of one entry, as a `d:response`. */
export function entryResponse(entry: DavEntry, request: PropfindRequest, dead: Map<string, string> | undefined, extras: Extras): string {
  const found: string[] = [];
  const missing: string[] = [];
  const add = (name: string) => {
    const live = liveProperty(entry, name, extras);
    if (live !== undefined) found.push(property(name, live));
    else if (dead?.has(name)) found.push(dead.get(name)!);
    else missing.push(emptyProperty(name));
  };
  if (request.kind === 'prop') request.names.forEach(add);
  else if (request.kind === 'propname') {
    for (const name of [...liveNames(entry, extras), ...(dead?.keys() ?? [])]) found.push(emptyProperty(name));
  } else {
    // allprop: each live property written once, those the entry lacks left out, then the dead ones.
    for (const name of ALLPROP_LIVE) {
      const live = liveProperty(entry, name, extras);
      if (live !== undefined) found.push(property(name, live));
    }
    for (const xml of dead?.values() ?? []) found.push(xml);
    for (const name of request.include) if (!ALLPROP_LIVE.includes(name) && !dead?.has(name)) add(name);
  }
  return `<d:response><d:href>${escapeXml(entry.href)}</d:href>${propstat(200, found)}${propstat(404, missing)}</d:response>`;
}
