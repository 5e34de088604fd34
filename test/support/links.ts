import assert from 'node:assert/strict';

/** Splits a share link `…/s/<sharedHash>#<key>` into its hash and its key. */
export function splitLink(shareLink: string): { hash: string; key: string } {
  const match = /\/s\/([A-Za-z0-9_-]+)#([A-Za-z0-9_-]{43})$/.exec(shareLink);
  assert.ok(match, `unexpected shareLink ${shareLink}`);
  return { hash: match[1], key: match[2] };
}
