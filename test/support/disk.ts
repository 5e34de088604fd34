import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Every regular file under `dir`, recursively ([] when `dir` does not exist). */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** The checksum as the API writes it: `sha256:<hex>`. */
export function sha256Tag(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}
