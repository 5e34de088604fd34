import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS } from '../../helper.js';
import { LITMUS_SUITES, coffreDav, describeRun, requireTool, runLitmus } from '../../support/dav-clients.js';

// litmus (Debian `litmus`, the WebDAV conformance suite of the neon project) against /dav/: the
// basic, copymove, props, locks and http suites must all pass, every test of them run.

for (const dialect of DIALECTS) {
  describe(`litmus against /dav/ (${dialect})`, () => {
    it(`passes the ${LITMUS_SUITES.join(', ')} suites in a bucket`, { timeout: 180_000 }, async (t) => {
      const litmus = requireTool(t, 'litmus');
      if (!litmus) return;
      const target = await coffreDav(t, dialect);
      const report = await runLitmus(t, litmus, target, { label: `coffre-${dialect}`, timeoutMs: 150_000 });
      const summaries = report.suites.map((s) => `${s.name}: ${s.passed ?? '?'}/${s.run ?? '?'} passed`).join(', ');
      assert.equal(
        report.problems.length,
        0,
        `litmus ${target.url} on ${dialect} (${summaries}); ${report.problems.length} problems (requests and answers in ` +
          `test-results/coffre-${dialect}-litmus-debug.log):\n  ${report.problems.join('\n  ')}\n${describeRun(report.run, 1500)}`,
      );
      assert.equal(report.run.code, 0, describeRun(report.run));
      assert.equal(report.tests.filter((x) => x.result === 'pass').length, report.tests.length, 'every test ran and passed');
    });
  });
}
