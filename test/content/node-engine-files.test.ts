// The files API again on the portable engine (split from the other node-engine files so that each
// stays well inside the per-file timeout on a slow machine).
import { runOnTheNodeEngine } from '../support/node-engine.js';

runOnTheNodeEngine();
await import('../modules/files/files-api.test.js');
