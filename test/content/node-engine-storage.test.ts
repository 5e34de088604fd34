// Robustness, small inline files and what rests on disk, again on the portable engine.
import { runOnTheNodeEngine } from '../support/node-engine.js';

runOnTheNodeEngine();
await import('../modules/files/files-robustness.test.js');
await import('../modules/files/inline-blobs.test.js');
await import('../modules/files/no-plaintext-at-rest.test.js');
