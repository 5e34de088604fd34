import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { CONFIG_VARIABLES } from '../src/config.js';

describe('README', () => {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it('documents every configuration variable with its default', () => {
    for (const [name, defaultValue] of CONFIG_VARIABLES) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      assert.ok(row, `README has no row for ${name}`);
      assert.ok(row.includes(defaultValue.replace(/^\(|\)$/g, '')), `README row for ${name} does not show its default ${defaultValue}`);
    }
  });

  it('gives the two commands a newcomer runs', () => {
    assert.ok(readme.includes('npm ci && npm start'));
    assert.ok(readme.includes('npm ci && npm test'));
  });
});
