#!/usr/bin/env node
// Builds the optional native addon (native/module.c: AES-256-GCM, durable small files) after
// `npm ci`. It needs a C compiler, make, python3 and Node's headers (node-gyp builds offline
// against those npm is configured with). When it cannot be built, Coffre does the same work in
// JavaScript (the same stored format through node:crypto, node:fs calls), slower: the install
// goes on with a warning instead of failing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const nativeDir = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'native');
// npm runs lifecycle scripts with its own node-gyp (npm_config_node_gyp); `node-gyp` on the PATH otherwise.
const gyp = process.env.npm_config_node_gyp;
const [command, args] = gyp ? [process.execPath, [gyp, 'rebuild']] : ['node-gyp', ['rebuild']];
// Outside npm (which passes its nodedir setting on), the headers of the running Node, when they
// are installed beside it, keep node-gyp from downloading them.
const prefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const result = spawnSync(command, args, { cwd: nativeDir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
if (result.status === 0) {
  process.stdout.write('native addon built (native/build/Release/coffre_native.node)\n');
} else {
  const reason = result.error?.message ?? result.stderr.trim().split('\n').slice(-5).join('\n');
  process.stderr.write(
    `warning: the native addon could not be built; Coffre will use node:crypto and node:fs instead (same format, slower).\n${reason}\n`,
  );
}
