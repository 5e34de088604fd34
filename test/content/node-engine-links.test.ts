// Links and the web decryptor against the sealed route, again on the portable engine.
import { runOnTheNodeEngine } from '../support/node-engine.js';

runOnTheNodeEngine();
await import('../modules/links/links.test.js');
await import('../web/sealed-decrypt.test.js');
