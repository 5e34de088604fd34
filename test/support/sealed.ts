import { nodeAead } from '../../src/content/aead.js';
import { Opener } from '../../src/content/codecs.js';

/** The plaintext of stored bytes (docs/storage-format.md) under `dataKey`; throws CipherFormatError when they do not open. */
export function openSealed(dataKey: Buffer, stored: Buffer): Buffer {
  const opener = new Opener(nodeAead(dataKey));
  return Buffer.concat([...opener.write([stored]), ...opener.end()]);
}
