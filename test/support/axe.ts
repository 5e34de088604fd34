import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core in the page under test. Its script is run with page.evaluate, which goes through the
// DevTools protocol: the pages' Content-Security-Policy (script-src 'self') would refuse it as an
// inline <script>.

// Browser global used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any;

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Every standard rule set: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice'];

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string; summary: string }[];
}

/** The violations axe finds in the page as it is now, of any impact (minor ones included). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as any).axe === 'object');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (tags: string[]) => {
    const axe = (globalThis as any).axe;
    const results = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return results.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => ({ target: n.target.join(' '), summary: n.failureSummary ?? '' })),
    }));
  }, TAGS);
}

/** A readable list of violations: rule, impact, help, and each element's selector and why it fails. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.map((n) => `    - ${n.target}\n      ${n.summary.replace(/\n/g, '\n      ')}`).join('\n');
      return `  ${v.id} (${v.impact ?? 'no impact'}): ${v.help}\n${nodes}`;
    })
    .join('\n');
}

/** Fails when axe finds any violation on the page, naming `screen` and every failing element. */
export async function assertNoAxeViolations(page: Page, screen: string): Promise<void> {
  const violations = await axeViolations(page);
  assert.equal(violations.length, 0, `axe found violations on ${screen}:\n${describeViolations(violations)}`);
}
