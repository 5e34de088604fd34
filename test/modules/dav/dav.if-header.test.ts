// The If header parser (RFC 4918 §10.4): the forms clients send (neon, litmus, Windows, macOS),
// and what it refuses. No database.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import { parseIfHeader, submittedTokens } from '../../../src/modules/dav/dav.if-header.js';

const TOKEN = 'urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2';

describe('parseIfHeader', () => {
  it('reads untagged lists of state tokens and entity tags, with Not in any case', () => {
    assert.deepEqual(parseIfHeader(`(<${TOKEN}>)`), [{ conditions: [{ not: false, kind: 'token', value: TOKEN }] }]);
    assert.deepEqual(parseIfHeader(`(<${TOKEN}> ["I am an ETag"]) (["I am another ETag"])`), [
      {
        conditions: [
          { not: false, kind: 'token', value: TOKEN },
          { not: false, kind: 'etag', value: '"I am an ETag"' },
        ],
      },
      { conditions: [{ not: false, kind: 'etag', value: '"I am another ETag"' }] },
    ]);
    assert.deepEqual(parseIfHeader('(Not <DAV:no-lock>)(not[W/"weak"])'), [
      { conditions: [{ not: true, kind: 'token', value: 'DAV:no-lock' }] },
      { conditions: [{ not: true, kind: 'etag', value: 'W/"weak"' }] },
    ]);
    assert.deepEqual(parseIfHeader('  ( ["a \\" quote"] )  '), [{ conditions: [{ not: false, kind: 'etag', value: '"a \\" quote"' }] }]);
  });

  it('reads tagged lists, each list scoped by the tag before it', () => {
    const header = `<http://example.com/dav/a/> (<${TOKEN}>) (Not <DAV:no-lock>)\r\n\t</dav/b.txt> (["x"])`;
    assert.deepEqual(parseIfHeader(header), [
      { resource: 'http://example.com/dav/a/', conditions: [{ not: false, kind: 'token', value: TOKEN }] },
      { resource: 'http://example.com/dav/a/', conditions: [{ not: true, kind: 'token', value: 'DAV:no-lock' }] },
      { resource: '/dav/b.txt', conditions: [{ not: false, kind: 'etag', value: '"x"' }] },
    ]);
  });

  it('refuses what does not follow the grammar (400 DAV_BAD_HEADER)', () => {
    const refused = [
      '',
      '   ',
      `<${TOKEN}>`,
      `(<${TOKEN}>`,
      '()',
      '(Not)',
      '(<>)',
      '(<a b>)',
      '([unquoted])',
      '(["open)',
      '(Nothing <DAV:no-lock>)',
      `(<${TOKEN}>) <http://example.com/> (<${TOKEN}>)`,
      `<http://example.com/> <http://example.com/b> (<${TOKEN}>)`,
      `(<${TOKEN}>) garbage`,
      `(${'<x>'.repeat(6000)})`,
    ];
    for (const header of refused) {
      assert.throws(
        () => parseIfHeader(header),
        (error: unknown) => error instanceof AppError && error.code === 'DAV_BAD_HEADER',
        JSON.stringify(header.slice(0, 60)),
      );
    }
  });
});

describe('submittedTokens', () => {
  it('answers the state tokens outside a Not, each once', () => {
    const lists = parseIfHeader(`(<${TOKEN}> ["e"]) (Not <urn:uuid:other>) (<${TOKEN}>)`);
    assert.deepEqual(submittedTokens(lists), [TOKEN]);
    assert.deepEqual(submittedTokens(parseIfHeader('(Not <DAV:no-lock>)')), []);
  });
});
