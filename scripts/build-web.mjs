#!/usr/bin/env node
// Builds the web application (web/src) into dist/web: one bundled script and one stylesheet with
// content hashes in their names, and index.html pointing at them. No inline script or style, so
// the pages run under a strict Content-Security-Policy. esbuild ships its binary in its npm package.
// Each asset is also written compressed (.br, .gz) once, here, for the server to send as it is to
// the browsers that accept it (@fastify/static's preCompressed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Builds the bundle into `outDir` (default dist/web) and returns that folder. */
export async function buildWeb({ outDir = path.join(root, 'dist', 'web'), minify = true } = {}) {
  const assets = path.join(outDir, 'assets');
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(assets, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: 'web/src/main.tsx' },
    bundle: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    sourcemap: 'linked',
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = outputs.find((f) => /^app-.*\.js$/.test(f));
  const style = outputs.find((f) => /^app-.*\.css$/.test(f));
  if (!script || !style) throw new Error(`the web build produced no script or stylesheet: ${outputs.join(', ')}`);
  const template = fs.readFileSync(path.join(root, 'web', 'index.html'), 'utf8');
  const html = template.replace('%SCRIPT%', `/assets/${script}`).replace('%STYLE%', `/assets/${style}`);
  fs.writeFileSync(path.join(outDir, 'index.html'), html);
  fs.copyFileSync(path.join(root, 'web', 'favicon.svg'), path.join(outDir, 'favicon.svg'));
  precompress(assets);
  return outDir;
}

/** Writes `<name>.br` and `<name>.gz` beside every text asset of `dir`, at the best compression. */
function precompress(dir) {
  for (const name of fs.readdirSync(dir)) {
    if (!/\.(js|css|map|svg)$/.test(name)) continue;
    const file = path.join(dir, name);
    const content = fs.readFileSync(file);
    const brotli = zlib.brotliCompressSync(content, {
      params: {
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      },
    });
    fs.writeFileSync(`${file}.br`, brotli);
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(content, { level: zlib.constants.Z_BEST_COMPRESSION }));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildWeb({ minify: !process.argv.includes('--dev') });
  process.stdout.write(`web application built into ${path.relative(root, out)}\n`);
}
