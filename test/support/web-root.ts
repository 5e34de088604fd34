import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary web root with an index page, a favicon and one script, in place of the built web app. */
export function fakeWebRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-webroot-'));
  fs.mkdirSync(path.join(root, 'assets'));
  fs.writeFileSync(
    path.join(root, 'index.html'),
    '<!doctype html><title>Coffre</title><script type="module" src="/assets/app-X.js"></script>',
  );
  fs.writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  fs.writeFileSync(path.join(root, 'assets', 'app-X.js'), 'console.log(1)');
  return root;
}
