import type { Element } from '@xmldom/xmldom';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { assertUnlocked, type LockContext } from './dav.locks.js';
import { hrefOf, type DavPath } from './dav.paths.js';
import { PROTECTED, propstat } from './dav.properties.js';
import { assertMay, isCollection, resolve } from './dav.resources.js';
import { XML_HEADER, childElements, clarkOf, emptyProperty, escapeXml, isDav, parseXmlBody, serializeElement } from './dav.xml.js';

/** One instruction of a propertyupdate, in document order. */
type Change = { op: 'set'; name: string; xml: string } | { op: 'remove'; name: string };

/**
 * PROPPATCH (RFC 4918 §9.2): sets and removes dead properties, all or none. A live property
 * cannot be changed (403, and 424 for the others, which are then left as they were).
 */
export async function proppatch(ctx: AppContext, principal: Principal, path: DavPath, body: Buffer | undefined, locks: LockContext) {
  const changes = propertyUpdate(parseXmlBody(body));
  const target = await resolve(ctx, principal, path);
  if (target.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  if (target.kind !== 'folder' && target.kind !== 'file')
    throw new AppError('DAV_FORBIDDEN', 'This collection has no properties of its own');
  await assertMay(ctx, principal, target, 'edit');
  await assertUnlocked(ctx, principal, [target], locks);
  const itemId = target.kind === 'folder' ? target.folder.id : target.file.id;
  const refused = changes.filter((change) => PROTECTED.has(change.name));
  const names = changes.map((change) => emptyProperty(change.name));
  let blocks: string;
  if (refused.length > 0) {
    const refusedSet = new Set(refused.map((change) => change.name));
    const others = changes.filter((change) => !refusedSet.has(change.name));
    blocks =
      propstat(
        403,
        refused.map((c) => emptyProperty(c.name)),
      ) +
      propstat(
        424,
        others.map((c) => emptyProperty(c.name)),
      );
  } else {
    await applyChanges(ctx, itemId, changes);
    blocks = propstat(200, names);
  }
  const href = escapeXml(hrefOf(path, isCollection(target)));
  return `${XML_HEADER}<d:multistatus xmlns:d="DAV:"><d:response><d:href>${href}</d:href>${blocks}</d:response></d:multistatus>\n`;
}

/** The changes a `DAV:propertyupdate` body asks for. */
function propertyUpdate(root: Element | null): Change[] {
  if (!root || !isDav(root, 'propertyupdate')) throw new AppError('DAV_MALFORMED_XML', 'A PROPPATCH body is a DAV:propertyupdate element');
  const changes: Change[] = [];
  for (const instruction of childElements(root)) {
    const set = isDav(instruction, 'set');
    if (!set && !isDav(instruction, 'remove')) continue;
    const prop = childElements(instruction).find((child) => isDav(child, 'prop'));
    if (!prop) throw new AppError('DAV_MALFORMED_XML', 'DAV:set and DAV:remove hold a DAV:prop');
    for (const element of childElements(prop)) {
      changes.push(set ? { op: 'set', name: clarkOf(element), xml: serializeElement(element) } : { op: 'remove', name: clarkOf(element) });
    }
  }
  if (changes.length === 0) throw new AppError('DAV_MALFORMED_XML', 'The propertyupdate changes no property');
  return changes;
}

/** The changes in order, in one transaction. */
async function applyChanges(ctx: AppContext, itemId: string, changes: Change[]): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    for (const change of changes) {
      await trx.deleteFrom('dav_properties').where('item_id', '=', itemId).where('name', '=', change.name).execute();
      if (change.op === 'set')
        await trx.insertInto('dav_properties').values({ item_id: itemId, name: change.name, value: change.xml }).execute();
    }
  });
}
