import { AppError } from '../../errors.js';

/**
 * The If request header of WebDAV (RFC 4918 §10.4). Hand-written: no maintained library parses it
 * (HTTP header libraries know lists of tokens, not its nested productions), and the grammar is
 * small:
 *
 *   If = 1*No-tag-list | 1*Tagged-list      Tagged-list = Resource-Tag 1*List
 *   List = "(" 1*Condition ")"              Condition = ["Not"] (State-token | "[" entity-tag "]")
 *   State-token = "<" absolute-URI ">"      Resource-Tag = "<" Simple-ref ">"
 *
 * with optional whitespace between the parts.
 */

/** One condition of a list: a state token (a lock token, or anything else in `<…>`) or an entity tag. */
export interface IfCondition {
  not: boolean;
  kind: 'token' | 'etag';
  /** The token without its angle brackets, or the entity tag as written (quotes, and `W/` if weak). */
  value: string;
}

/** One list: its conditions all hold for it to hold. `resource` is the tag that scopes it, if any. */
export interface IfList {
  resource?: string;
  conditions: IfCondition[];
}

/** Longer headers are refused (400): real clients send a few tokens. */
const MAX_LENGTH = 16 * 1024;

/** The lists of an If header, in order; 400 (DAV_BAD_HEADER) when it does not follow the grammar. */
export function parseIfHeader(header: string): IfList[] {
  if (header.length > MAX_LENGTH) throw bad('is too long');
  const scanner = new Scanner(header);
  const lists: IfList[] = [];
  let tagged: boolean | undefined;
  let resource: string | undefined;
  for (scanner.skipSpace(); !scanner.done(); scanner.skipSpace()) {
    if (scanner.peek() === '<') {
      if (tagged === false) throw bad('mixes tagged and untagged lists');
      tagged = true;
      resource = scanner.delimited('<', '>');
      scanner.skipSpace();
      if (scanner.peek() !== '(') throw bad('has a resource tag without a list');
      continue;
    }
    if (scanner.peek() !== '(') throw bad(`has an unexpected character at ${scanner.position}`);
    tagged ??= false;
    lists.push({ ...(resource !== undefined ? { resource } : {}), conditions: parseList(scanner) });
  }
  if (lists.length === 0) throw bad('holds no list');
  return lists;
}

function parseList(scanner: Scanner): IfCondition[] {
  scanner.expect('(');
  const conditions: IfCondition[] = [];
  for (scanner.skipSpace(); scanner.peek() !== ')'; scanner.skipSpace()) {
    if (scanner.done()) throw bad('has an unclosed list');
    let not = false;
    if (scanner.startsWithWord('not')) {
      not = true;
      scanner.skipSpace();
    }
    if (scanner.peek() === '<') conditions.push({ not, kind: 'token', value: scanner.delimited('<', '>') });
    else if (scanner.peek() === '[') conditions.push({ not, kind: 'etag', value: entityTag(scanner) });
    else throw bad(`has an unexpected character at ${scanner.position}`);
  }
  scanner.expect(')');
  if (conditions.length === 0) throw bad('has an empty list');
  return conditions;
}

/** `[W/"…"]` or `["…"]`: the tag inside the brackets (a quoted string, backslash escapes allowed). */
function entityTag(scanner: Scanner): string {
  scanner.expect('[');
  scanner.skipSpace();
  const start = scanner.position;
  if (scanner.startsWith('W/')) scanner.position += 2;
  scanner.expect('"');
  while (scanner.peek() !== '"') {
    if (scanner.done()) throw bad('has an unclosed entity tag');
    if (scanner.peek() === '\\') scanner.position++;
    scanner.position++;
  }
  scanner.position++;
  const tag = scanner.text.slice(start, scanner.position);
  scanner.skipSpace();
  scanner.expect(']');
  return tag;
}

class Scanner {
  position = 0;
  constructor(readonly text: string) {}

  done(): boolean {
    return this.position >= this.text.length;
  }

  peek(): string {
    return this.text[this.position] ?? '';
  }

  skipSpace(): void {
    while (/[ \t\r\n]/.test(this.peek())) this.position++;
  }

  startsWith(literal: string): boolean {
    return this.text.startsWith(literal, this.position);
  }

  /** Consumes `word` (any case) when it stands there followed by a space or a delimiter. */
  startsWithWord(word: string): boolean {
    const end = this.position + word.length;
    if (this.text.slice(this.position, end).toLowerCase() !== word) return false;
    if (!/^[ \t\r\n<[]?$/.test(this.text[end] ?? '')) return false;
    this.position = end;
    return true;
  }

  expect(char: string): void {
    if (this.peek() !== char) throw bad(`expected ${char} at ${this.position}`);
    this.position++;
  }

  /** The text between `open` and the next `close` (neither included), not empty and without whitespace. */
  delimited(open: string, close: string): string {
    this.expect(open);
    const end = this.text.indexOf(close, this.position);
    if (end < 0) throw bad(`has an unclosed ${open}`);
    const inner = this.text.slice(this.position, end);
    if (inner === '' || /[\s<>]/.test(inner)) throw bad(`has a malformed ${open}…${close}`);
    this.position = end + 1;
    return inner;
  }
}

function bad(what: string): AppError {
  return new AppError('DAV_BAD_HEADER', `The If header ${what}`);
}

/** The state tokens a request submits: those its If header names outside a Not (RFC 4918 §10.4.1). */
export function submittedTokens(lists: IfList[]): string[] {
  const tokens = lists.flatMap((list) => list.conditions.filter((c) => c.kind === 'token' && !c.not).map((c) => c.value));
  return [...new Set(tokens)];
}
