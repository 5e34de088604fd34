import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseMasterKey } from '../config.js';
import { KEY_BYTES } from './key-wrap.js';

export const MASTER_KEY_FILE = 'master.key';

/**
 * The instance master key: from `COFFRE_MASTER_KEY` (64 hex characters or base64 of 32 bytes),
 * else read from `<dataDir>/master.key`, else generated once into that file with mode 0600.
 * Every instance of one deployment must use the same key; keep a copy apart from the backups.
 */
export function loadMasterKey(configured: string | null, dataDir: string): Buffer {
  if (configured) return parseMasterKey(configured);
  const file = path.join(dataDir, MASTER_KEY_FILE);
  try {
    return parseMasterKey(fs.readFileSync(file, 'utf8').trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(KEY_BYTES);
  try {
    // 'wx' fails if another process created it first; then we read theirs.
    fs.writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseMasterKey(fs.readFileSync(file, 'utf8').trim());
  }
}
