// The import rules of .dependency-cruiser.cjs (npm run lint:deps), proved both ways on a small tree
// that mirrors src/'s layout, written to a temporary folder (nothing is written into src/). The
// project's own configuration and tsconfig.json are used, through the dependency-cruiser CLI
// exactly as `npm run lint:deps` calls it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IConfiguration, ICruiseResult } from 'dependency-cruiser';

const root = fileURLToPath(new URL('../../', import.meta.url));
const configFile = path.join(root, '.dependency-cruiser.cjs');
const require = createRequire(import.meta.url);
const config = require(configFile) as IConfiguration;
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** Files every tree has: the targets of the imports under test, and allowed imports inside them. */
const base: Record<string, string> = {
  'src/content/index.ts': "export { format } from './format.js';\nexport { engine } from './engine.js';\n",
  'src/content/format.ts': 'export interface Segment { size: number }\nexport const format = 1;\n',
  // The content core may use the native binding.
  'src/content/engine.ts': "import { nativeAddon } from './native-addon.js';\nexport const engine = nativeAddon;\n",
  'src/content/native-addon.ts': 'export const nativeAddon = null;\n',
  'src/blobs/blob-store.ts': 'export interface BlobStore { size: number }\nexport const storeValue = 1;\n',
  'src/blobs/blob-keys.ts': "export const newBlobKey = () => 'key';\n",
  'src/blobs/blobs.repository.ts': 'export const adjustBlobRefs = 1;\n',
  'src/blobs/fs/fs-store.ts': 'export const fsStore = 1;\n',
  'src/blobs/s3/s3-store.ts': 'export const s3Store = 1;\n',
  // Outside src/: not cruised, so its import of the native binding is nobody's business here.
  'test/helper.ts': "import { nativeAddon } from '../src/content/native-addon.js';\nexport const helper = nativeAddon;\n",
  // The layers, bottom up: the query builder (a stand-in package), db, config, crypto, the
  // access policy and its repository, then a module's repository, service and routes.
  'node_modules/kysely/package.json': '{ "name": "kysely", "version": "0.0.0", "main": "index.js" }\n',
  'node_modules/kysely/index.js': 'export const sql = 1;\n',
  'src/db/database.ts': "import { sql } from 'kysely';\nexport const db = sql;\n",
  'src/config.ts': 'export interface Config { port: number }\nexport const parseMasterKey = (text: string) => text;\n',
  'src/crypto/master-key.ts': "import { parseMasterKey } from '../config.js';\nexport const loadMasterKey = parseMasterKey;\n",
  'src/access/access.repository.ts': "import { db } from '../db/database.js';\nexport const findFolder = db;\n",
  'src/access/access.ts': "import { findFolder } from './access.repository.js';\nexport const loadFolderFor = findFolder;\n",
  'src/modules/folders/folders.repository.ts': "import { db } from '../../db/database.js';\nexport const findFolder = db;\n",
  'src/modules/folders/folders.service.ts':
    "import { loadFolderFor } from '../../access/access.js';\nimport { findFolder } from './folders.repository.js';\nexport const folderService = [loadFolderFor, findFolder];\n",
  'src/modules/folders/folders.routes.ts':
    "import { folderService } from './folders.service.js';\nexport const folderRoutes = folderService;\n",
};

/** An import that must be in the graph, resolved to `to`, and reported under none of the rules. */
const allowed: Record<string, { file: string; source: string; to: string }> = {
  'a module imports the content index': {
    file: 'src/modules/files/uses-index.ts',
    source: "import { format } from '../../content/index.js';\nexport const x = format;\n",
    to: 'src/content/index.ts',
  },
  'a module imports the blobs repository': {
    file: 'src/modules/files/uses-repository.ts',
    source: "import { adjustBlobRefs } from '../../blobs/blobs.repository.js';\nexport const x = adjustBlobRefs;\n",
    to: 'src/blobs/blobs.repository.ts',
  },
  'a module imports a type from blob-store.ts (import type)': {
    file: 'src/modules/files/uses-blob-store-type.ts',
    source: "import type { BlobStore } from '../../blobs/blob-store.js';\nexport type X = BlobStore;\n",
    to: 'src/blobs/blob-store.ts',
  },
  'a module imports a type from blob-store.ts (inline type specifiers only)': {
    file: 'src/modules/files/uses-blob-store-inline-type.ts',
    source: "import { type BlobStore } from '../../blobs/blob-store.js';\nexport type X = BlobStore;\n",
    to: 'src/blobs/blob-store.ts',
  },
  'the app mounts the routes of a module': {
    file: 'src/app.ts',
    source: "import { folderRoutes } from './modules/folders/folders.routes.js';\nexport const app = folderRoutes;\n",
    to: 'src/modules/folders/folders.routes.ts',
  },
  'the background jobs call into a module': {
    file: 'src/jobs.ts',
    source: "import { folderService } from './modules/folders/folders.service.js';\nexport const jobs = folderService;\n",
    to: 'src/modules/folders/folders.service.ts',
  },
  'the CLI calls into a module': {
    file: 'src/cli/coffre.ts',
    source: "import { findFolder } from '../modules/folders/folders.repository.js';\nexport const cli = findFolder;\n",
    to: 'src/modules/folders/folders.repository.ts',
  },
  'a module repository runs crypto (the bucket keys)': {
    file: 'src/modules/buckets/buckets.repository.ts',
    source: "import { loadMasterKey } from '../../crypto/master-key.js';\nexport const rewrapBucketKeys = loadMasterKey;\n",
    to: 'src/crypto/master-key.ts',
  },
  'the access policy reads through its own repository': {
    file: 'src/access/uses-repository.ts',
    source: "import { findFolder } from './access.repository.js';\nexport const x = findFolder;\n",
    to: 'src/access/access.repository.ts',
  },
  'db imports the query builder': {
    file: 'src/db/uses-kysely.ts',
    source: "import { sql } from 'kysely';\nexport const x = sql;\n",
    to: 'node_modules/kysely/index.js',
  },
  'db imports a type from the configuration': {
    file: 'src/db/prepare.ts',
    source: "import type { Config } from '../config.js';\nexport type X = Config;\n",
    to: 'src/config.ts',
  },
  'crypto reads the configuration': {
    file: 'src/crypto/uses-config.ts',
    source: "import { parseMasterKey } from '../config.js';\nexport const x = parseMasterKey;\n",
    to: 'src/config.ts',
  },
  'a layer below the modules imports types of the layers below it': {
    file: 'src/http/uses-lower-types.ts',
    source:
      "import type { Config } from '../config.js';\nimport type { BlobStore } from '../blobs/blob-store.js';\nexport interface Context { config: Config; blobs: BlobStore }\n",
    to: 'src/blobs/blob-store.ts',
  },
  'code outside src/modules/ imports a content internal': {
    file: 'src/http/uses-format.ts',
    source: "import { format } from '../content/format.js';\nexport const x = format;\n",
    to: 'src/content/format.ts',
  },
};

/** An import that must be reported under `rule` (and `alsoRules`, when it breaks several), and under no other rule. */
interface Forbidden {
  file: string;
  source: string;
  to: string;
  rule: string;
  alsoRules?: string[];
}

const rulesBroken = ({ rule, alsoRules }: Forbidden) => [rule, ...(alsoRules ?? [])].sort();
const forbidden: Record<string, Forbidden> = {
  'a module imports a content internal': {
    file: 'src/modules/files/uses-format.ts',
    source: "import { format } from '../../content/format.js';\nexport const x = format;\n",
    to: 'src/content/format.ts',
    rule: 'modules-use-content-index-only',
  },
  'a module imports a type from a content internal': {
    file: 'src/modules/links/uses-format-type.ts',
    source: "import type { Segment } from '../../content/format.js';\nexport type X = Segment;\n",
    to: 'src/content/format.ts',
    rule: 'modules-use-content-index-only',
  },
  'a module imports a content internal dynamically': {
    file: 'src/modules/files/uses-engine-dynamic.ts',
    source: "export async function x() {\n  return (await import('../../content/engine.js')).engine;\n}\n",
    to: 'src/content/engine.ts',
    rule: 'modules-use-content-index-only',
  },
  'a module imports the native binding': {
    file: 'src/modules/files/uses-native.ts',
    source: "import { nativeAddon } from '../../content/native-addon.js';\nexport const x = nativeAddon;\n",
    to: 'src/content/native-addon.ts',
    rule: 'native-binding-stays-in-core',
    // The addon loader is a content internal too.
    alsoRules: ['modules-use-content-index-only'],
  },
  'code outside the core imports the native binding': {
    file: 'src/crypto/aes.ts',
    source: "import { nativeAddon } from '../content/native-addon.js';\nexport const x = nativeAddon;\n",
    to: 'src/content/native-addon.ts',
    rule: 'native-binding-stays-in-core',
    // Crypto reaches no other layer either.
    alsoRules: ['crypto-runs-no-sql'],
  },
  'a blob store imports the native binding': {
    file: 'src/blobs/fs/uses-native.ts',
    source: "import { nativeAddon } from '../../content/native-addon.js';\nexport const x = nativeAddon;\n",
    to: 'src/content/native-addon.ts',
    rule: 'native-binding-stays-in-core',
  },
  'a module imports the filesystem blob store': {
    file: 'src/modules/files/uses-fs-store.ts',
    source: "import { fsStore } from '../../blobs/fs/fs-store.js';\nexport const x = fsStore;\n",
    to: 'src/blobs/fs/fs-store.ts',
    rule: 'modules-do-not-reach-blob-stores',
  },
  'a module imports the S3 blob store dynamically': {
    file: 'src/modules/storage/uses-s3-store.ts',
    source: "export async function x() {\n  return (await import('../../blobs/s3/s3-store.js')).s3Store;\n}\n",
    to: 'src/blobs/s3/s3-store.ts',
    rule: 'modules-do-not-reach-blob-stores',
  },
  'a module imports blob keys': {
    file: 'src/modules/files/uses-blob-keys.ts',
    source: "import { newBlobKey } from '../../blobs/blob-keys.js';\nexport const x = newBlobKey;\n",
    to: 'src/blobs/blob-keys.ts',
    rule: 'modules-do-not-reach-blob-stores',
  },
  'a module re-exports blob keys': {
    file: 'src/modules/files/reexports-blob-keys.ts',
    source: "export { newBlobKey } from '../../blobs/blob-keys.js';\n",
    to: 'src/blobs/blob-keys.ts',
    rule: 'modules-do-not-reach-blob-stores',
  },
  'a module imports a value from blob-store.ts': {
    file: 'src/modules/files/uses-blob-store-value.ts',
    source: "import { storeValue, type BlobStore } from '../../blobs/blob-store.js';\nexport const x: BlobStore = { size: storeValue };\n",
    to: 'src/blobs/blob-store.ts',
    rule: 'modules-do-not-reach-blob-stores',
  },
  'the access policy imports a module repository': {
    file: 'src/access/uses-module.ts',
    source: "import { findFolder } from '../modules/folders/folders.repository.js';\nexport const x = findFolder;\n",
    to: 'src/modules/folders/folders.repository.ts',
    rule: 'only-the-app-imports-modules',
  },
  'the HTTP layer imports a module repository': {
    file: 'src/http/auth.ts',
    source: "import { findFolder } from '../modules/folders/folders.repository.js';\nexport const x = findFolder;\n",
    to: 'src/modules/folders/folders.repository.ts',
    rule: 'only-the-app-imports-modules',
  },
  'the context imports a type from a module': {
    file: 'src/context.ts',
    source: "import type { folderService } from './modules/folders/folders.service.js';\nexport type X = typeof folderService;\n",
    to: 'src/modules/folders/folders.service.ts',
    rule: 'only-the-app-imports-modules',
  },
  'the content core imports a module': {
    file: 'src/content/uses-module.ts',
    source: "import { findFolder } from '../modules/folders/folders.repository.js';\nexport const x = findFolder;\n",
    to: 'src/modules/folders/folders.repository.ts',
    rule: 'only-the-app-imports-modules',
  },
  'db seeds from a module': {
    file: 'src/db/seeds-from-module.ts',
    source: "import { findFolder } from '../modules/folders/folders.repository.js';\nexport const x = findFolder;\n",
    to: 'src/modules/folders/folders.repository.ts',
    rule: 'db-is-the-bottom-layer',
    alsoRules: ['only-the-app-imports-modules'],
  },
  'db imports the access policy': {
    file: 'src/db/uses-access.ts',
    source: "import { loadFolderFor } from '../access/access.js';\nexport const x = loadFolderFor;\n",
    to: 'src/access/access.ts',
    rule: 'db-is-the-bottom-layer',
  },
  'db imports the content core': {
    file: 'src/db/uses-content.ts',
    source: "import { format } from '../content/index.js';\nexport const x = format;\n",
    to: 'src/content/index.ts',
    rule: 'db-is-the-bottom-layer',
  },
  'crypto imports a type of the database layer': {
    file: 'src/crypto/rotate.ts',
    source: "import type { db } from '../db/database.js';\nexport type X = typeof db;\n",
    to: 'src/db/database.ts',
    rule: 'crypto-runs-no-sql',
  },
  'crypto imports the query builder': {
    file: 'src/crypto/uses-kysely.ts',
    source: "import { sql } from 'kysely';\nexport const x = sql;\n",
    to: 'node_modules/kysely/index.js',
    rule: 'crypto-runs-no-sql',
  },
  'crypto imports a blob store': {
    file: 'src/crypto/uses-blobs.ts',
    source: "import { fsStore } from '../blobs/fs/fs-store.js';\nexport const x = fsStore;\n",
    to: 'src/blobs/fs/fs-store.ts',
    rule: 'crypto-runs-no-sql',
  },
  'config imports crypto': {
    // Replaces the tree's config.ts: what it exports, and the forbidden import.
    file: 'src/config.ts',
    source: `${base['src/config.ts']}import { loadMasterKey } from './crypto/master-key.js';\nexport const x = loadMasterKey;\n`,
    to: 'src/crypto/master-key.ts',
    rule: 'config-imports-nothing-of-the-app',
  },
  'a repository imports a service': {
    file: 'src/modules/folders/uses-service.repository.ts',
    source: "import { folderService } from './folders.service.js';\nexport const x = folderService;\n",
    to: 'src/modules/folders/folders.service.ts',
    rule: 'repositories-stay-below-services',
  },
  'a repository imports routes': {
    file: 'src/modules/folders/uses-routes.repository.ts',
    source: "import { folderRoutes } from './folders.routes.js';\nexport const x = folderRoutes;\n",
    to: 'src/modules/folders/folders.routes.ts',
    rule: 'repositories-stay-below-services',
  },
  'a repository imports the access policy': {
    file: 'src/modules/files/files.repository.ts',
    source: "import { loadFolderFor } from '../../access/access.js';\nexport const x = loadFolderFor;\n",
    to: 'src/access/access.ts',
    rule: 'repositories-stay-below-services',
  },
  'the access repository imports the HTTP layer': {
    file: 'src/access/uses-http.repository.ts',
    source: "import { x as auth } from '../http/uses-format.js';\nexport const x = auth;\n",
    to: 'src/http/uses-format.ts',
    rule: 'repositories-stay-below-services',
  },
  'src/ imports a file that does not exist': {
    file: 'src/lib/unresolvable.ts',
    source: "import { nothing } from './does-not-exist.js';\nexport const x = nothing;\n",
    to: './does-not-exist.js',
    rule: 'no-unresolvable',
  },
  'src/ imports from test/': {
    file: 'src/lib/uses-test.ts',
    source: "import { helper } from '../../test/helper.js';\nexport const x = helper;\n",
    to: 'test/helper.ts',
    rule: 'no-test-in-src',
  },
};

function writeTree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-import-rules-'));
  // The configuration's tsConfig.fileName is relative to where depcruise runs: the real one.
  fs.copyFileSync(path.join(root, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  for (const [file, source] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

/** `npm run lint:deps`'s command, run in `dir`, with extra arguments. */
function runDepcruise(dir: string, extra: string[]) {
  const run = spawnSync(process.execPath, [depcruise, 'src', '--config', configFile, ...extra], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.error, undefined);
  return run;
}

const allowedTree = { ...base, ...Object.fromEntries(Object.values(allowed).map(({ file, source }) => [file, source])) };
const fullTree = { ...allowedTree, ...Object.fromEntries(Object.values(forbidden).map(({ file, source }) => [file, source])) };

describe('import rules (.dependency-cruiser.cjs)', () => {
  const dirs: string[] = [];
  let fullDir: string;
  let result: ICruiseResult;

  before(() => {
    fullDir = writeTree(fullTree);
    dirs.push(fullDir);
    const run = runDepcruise(fullDir, ['--output-type', 'json']);
    assert.equal(run.status, 0, run.stderr);
    result = JSON.parse(run.stdout) as ICruiseResult;
  });
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  function edge(from: string, to: string) {
    return result.modules.find((module) => module.source === from)?.dependencies.find((dependency) => dependency.resolved === to);
  }
  function rulesOf(from: string, to: string) {
    return result.summary.violations
      .filter((violation) => violation.from === from && violation.to === to)
      .map((violation) => violation.rule.name);
  }

  it('tests every forbidden rule of the configuration, and only those', () => {
    const configured = new Set((config.forbidden ?? []).map((rule) => rule.name));
    const tested = new Set(Object.values(forbidden).map(({ rule }) => rule));
    assert.deepEqual([...tested].sort(), [...configured].sort());
  });

  for (const [name, { file, to }] of Object.entries(allowed)) {
    it(`allows: ${name}`, () => {
      const dependency = edge(file, to);
      assert.ok(dependency, `${file} → ${to} is not in the graph: the import did not resolve to the .ts file`);
      assert.equal(dependency.couldNotResolve, false);
      assert.deepEqual(rulesOf(file, to), []);
    });
  }

  for (const [name, forbid] of Object.entries(forbidden)) {
    const { file, to, rule } = forbid;
    it(`forbids: ${name} (${rule})`, () => {
      if (rule !== 'no-unresolvable') {
        const dependency = edge(file, to);
        assert.ok(dependency, `${file} → ${to} is not in the graph`);
        assert.equal(dependency.couldNotResolve, false);
      }
      assert.deepEqual(rulesOf(file, to).sort(), rulesBroken(forbid));
    });
  }

  it('allows the core to use the native binding', () => {
    const from = 'src/content/engine.ts';
    assert.ok(edge(from, 'src/content/native-addon.ts'), `${from} → src/content/native-addon.ts is not in the graph`);
    assert.deepEqual(rulesOf(from, 'src/content/native-addon.ts'), []);
  });

  it('cruises src/ only: test/ is reached but not followed', () => {
    const helper = result.modules.find((module) => module.source === 'test/helper.ts');
    assert.ok(helper, 'test/helper.ts is not in the graph');
    assert.deepEqual(helper.dependencies, []);
    assert.deepEqual(
      result.summary.violations.filter((violation) => !violation.from.startsWith('src/')),
      [],
    );
  });

  it('reports nothing but the forbidden imports', () => {
    const expected = Object.values(forbidden).flatMap((forbid) =>
      rulesBroken(forbid).map((rule) => `${rule}: ${forbid.file} → ${forbid.to}`),
    );
    const reported = result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
    assert.deepEqual(reported.sort(), expected.sort());
  });

  it('fails (exit = number of errors) on them as npm run lint:deps runs it, naming each', () => {
    // The default (err) reporter is the one whose exit code counts the errors; json's is always 0.
    const run = runDepcruise(fullDir, []);
    const errors = Object.values(forbidden).flatMap((forbid) =>
      rulesBroken(forbid).map((rule) => `${rule}: ${forbid.file} → ${forbid.to}`),
    );
    assert.equal(run.status, errors.length, run.stdout + run.stderr);
    for (const error of errors) assert.ok(run.stdout.includes(`error ${error}`), `not in the output: ${error}`);
  });

  it('passes (exit 0) a tree with only the allowed imports', () => {
    const dir = writeTree(allowedTree);
    dirs.push(dir);
    const run = runDepcruise(dir, []);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /no dependency violations found/);
  });
});
