#!/usr/bin/env node
// Runs the compiled CLI when the project is built (npm start builds it), else the TypeScript source through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli/coffre.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/coffre.ts', import.meta.url).href);
}
