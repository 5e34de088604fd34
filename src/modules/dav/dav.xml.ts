import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom';
import { AppError } from '../../errors.js';

/** Reading the XML bodies clients send, and writing the ones we answer, for WebDAV. */

export const DAV_NS = 'DAV:';

// A DOCTYPE is where entities (and external ones) are declared: refusing it before parsing means
// none is ever expanded or fetched, whatever the parser would do with it.
const DECLARATION = /<!DOCTYPE|<!ENTITY/i;

/**
 * The root element of an XML request body, or null when there is none. The body must be UTF-8
 * (fatal decoding) and well-formed (any parser error or warning is 400), without a DOCTYPE.
 */
export function parseXmlBody(body: Buffer | undefined): Element | null {
  if (!body || body.length === 0) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new AppError('DAV_MALFORMED_XML', 'The XML body is not valid UTF-8');
  }
  if (text.trim() === '') return null;
  if (DECLARATION.test(text)) throw new AppError('DAV_XML_DOCTYPE');
  try {
    const document = new DOMParser({
      onError: (level, message) => {
        throw new Error(`${level}: ${message}`);
      },
    }).parseFromString(text, 'application/xml');
    const root = document.documentElement;
    if (!root) throw new Error('no root element');
    return root;
  } catch (error) {
    throw new AppError('DAV_MALFORMED_XML', `The XML body is malformed: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The element children of `element` (text and comments left out). */
export function childElements(element: Element): Element[] {
  const out: Element[] = [];
  for (let node = element.firstChild; node; node = node.nextSibling) if (node.nodeType === 1) out.push(node as Element);
  return out;
}

/** Whether `element` is `{DAV:}name`. */
export function isDav(element: Element, name: string): boolean {
  return element.namespaceURI === DAV_NS && element.localName === name;
}

/** The first `{DAV:}name` child of `element`, if any. */
export function davChild(element: Element, name: string): Element | undefined {
  return childElements(element).find((child) => isDav(child, name));
}

/** An element as XML text, with the namespace declarations it needs to stand alone. */
export function serializeElement(element: Element): string {
  return new XMLSerializer().serializeToString(element);
}

/** Text escaped for XML content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A property name as Clark notation, `{namespace}local`: the key of properties in maps and the database. */
export function clark(namespace: string, local: string): string {
  return `{${namespace}}${local}`;
}

/** The `{namespace}local` of a property element. */
export function clarkOf(element: Element): string {
  return clark(element.namespaceURI ?? '', element.localName ?? element.nodeName);
}

/** Splits Clark notation back into its namespace and local name. */
export function splitClark(name: string): { namespace: string; local: string } {
  const end = name.indexOf('}');
  return { namespace: name.slice(1, end), local: name.slice(end + 1) };
}

/** An empty property element (for names without values, and 404 propstats). */
export function emptyProperty(name: string): string {
  const { namespace, local } = splitClark(name);
  if (namespace === DAV_NS) return `<d:${local}/>`;
  if (namespace === '') return `<${local} xmlns=""/>`;
  return `<x:${local} xmlns:x="${escapeXml(namespace)}"/>`;
}

/** A property element with already-written XML content. */
export function property(name: string, content: string): string {
  const { namespace, local } = splitClark(name);
  if (namespace === DAV_NS) return `<d:${local}>${content}</d:${local}>`;
  if (namespace === '') return `<${local} xmlns="">${content}</${local}>`;
  return `<x:${local} xmlns:x="${escapeXml(namespace)}">${content}</x:${local}>`;
}

export const XML_HEADER = '<?xml version="1.0" encoding="utf-8"?>\n';

/** The body of a DAV error answer: a precondition element when one applies, and the message. */
export function errorBody(message: string, condition?: string): string {
  const precondition = condition ? `<d:${condition}/>` : '';
  return `${XML_HEADER}<d:error xmlns:d="DAV:" xmlns:c="urn:coffre">${precondition}<c:message>${escapeXml(message)}</c:message></d:error>\n`;
}
