import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  LITMUS_SUITES,
  clientEnv,
  describeCadaver,
  describeRclone,
  describeRun,
  findTool,
  litmusProblems,
  parseLitmus,
  rcloneClient,
  rcloneServe,
  requireTool,
  runCadaver,
  runLitmus,
  runProcess,
} from './dav-clients.js';
import { tempDir } from './disk.js';

// The harness of the WebDAV client tests (test/modules/dav/) checked against a peer server that is
// not Coffre (`rclone serve webdav`), so that a change of a client's output shows here, apart from
// Coffre's own failures. A few seconds in all.

// litmus 0.13's output, cut: a test printed twice (the second time after \r), a FAIL whose reason
// spans two lines, a warning that puts the result on a line of its own, skipped tests.
const LITMUS_SAMPLE = [
  "-> running `props':",
  '\r 0. init.................. \r 0. init.................. pass',
  "\r 6. propset............... \r 6. propset............... FAIL (PROPPATCH on `/litmus/prop': 403 Forbidden",
  ')',
  '\r 7. propget............... \r 7. propget............... SKIPPED',
  '-> 1 test was skipped.',
  "<- summary for `props': of 2 tests run: 1 passed, 1 failed. 50.0%",
  "-> running `locks':",
  '\r18. cond_put_corrupt_token WARNING: PUT failed with 412 not 423',
  '    ...................... pass (with 1 warning)',
  '    ...................... \r19. complex_cond_put...... pass',
  '\r20. fail_complex_cond_put. \r20. fail_complex_cond_put. FAIL (PUT with complex bogus conditional should fail with 412: 201 Created)',
  "<- summary for `locks': of 3 tests run: 2 passed, 1 failed. 66.7%",
  "-> running `http':",
  '\r 0. init.................. \r 0. init.................. pass',
  '\r 1. begin................. ',
].join('\n');

describe('WebDAV client harness (test/support/dav-clients.ts)', () => {
  it('parses litmus output: results, multi-line reasons, warnings, summaries, a suite cut short', () => {
    const { suites, tests } = parseLitmus(LITMUS_SAMPLE);
    assert.deepEqual(
      suites.map((s) => [s.name, s.run, s.passed, s.failed]),
      [
        ['props', 2, 1, 1],
        ['locks', 3, 2, 1],
        ['http', null, null, null],
      ],
    );
    assert.deepEqual(
      tests.map((x) => `${x.suite} ${x.number} ${x.name} ${x.result}`),
      [
        'props 0 init pass',
        'props 6 propset FAIL',
        'props 7 propget SKIPPED',
        'locks 18 cond_put_corrupt_token pass',
        'locks 19 complex_cond_put pass',
        'locks 20 fail_complex_cond_put FAIL',
        'http 0 init pass',
        'http 1 begin unfinished',
      ],
    );
    assert.equal(tests[1].message, "PROPPATCH on `/litmus/prop': 403 Forbidden");
    assert.deepEqual(tests[3].warnings, ['PUT failed with 412 not 423']);
    assert.deepEqual(litmusProblems(suites, tests, ['props', 'locks', 'http', 'basic']), [
      'suite props: 1 of 2 failed',
      'suite locks: 1 of 3 failed',
      'suite http: no summary line (litmus stopped or crashed in it)',
      'suite basic: never started',
      "props 6. propset: FAIL (PROPPATCH on `/litmus/prop': 403 Forbidden)",
      'props 7. propget: SKIPPED',
      'locks 20. fail_complex_cond_put: FAIL (PUT with complex bogus conditional should fail with 412: 201 Created)',
      'http 1. begin: unfinished',
    ]);
  });

  it('kills a process group that outlives its timeout, children included', { timeout: 20_000 }, async (t) => {
    const cwd = tempDir(t, 'harness');
    assert.equal(findTool('coffre-no-such-client'), null);
    const result = await runProcess(t, 'sh', ['-c', 'echo started; sleep 30 & sleep 30'], { cwd, env: clientEnv(cwd), timeoutMs: 300 });
    assert.ok(result.timedOut, describeRun(result));
    assert.ok(result.ms < 5000, `the run ended ${result.ms} ms after it started`);
    assert.equal(result.stdout, 'started\n');
  });

  it('litmus against rclone serve webdav: every suite is summarised and the parsed results add up', { timeout: 120_000 }, async (t) => {
    const litmus = requireTool(t, 'litmus');
    const rclone = litmus && requireTool(t, 'rclone');
    if (!litmus || !rclone) return;
    const peer = await rcloneServe(t, rclone);
    const report = await runLitmus(t, litmus, peer, { label: 'rclone-serve', timeoutMs: 90_000 });
    assert.ok(!report.run.timedOut, describeRun(report.run));
    for (const name of LITMUS_SUITES) {
      const suite = report.suites.find((s) => s.name === name);
      assert.ok(suite && suite.run !== null, `suite ${name} has a summary:\n${describeRun(report.run)}`);
      const ran = report.tests.filter((x) => x.suite === name && (x.result === 'pass' || x.result === 'FAIL'));
      assert.equal(ran.length, suite.run, `suite ${name}: tests parsed that ran`);
      assert.equal(ran.filter((x) => x.result === 'FAIL').length, suite.failed, `suite ${name}: failures parsed`);
    }
    // rclone serve has no dead properties: its PROPPATCH failures are named with their reason.
    assert.ok(
      report.problems.some((p) => /^props \d+\. propset: FAIL \(.+\)$/.test(p)),
      report.problems.join('\n'),
    );
  });

  it('cadaver against rclone serve webdav: every step is read, failures included', { timeout: 60_000 }, async (t) => {
    const cadaver = requireTool(t, 'cadaver');
    const rclone = cadaver && requireTool(t, 'rclone');
    if (!cadaver || !rclone) return;
    const peer = await rcloneServe(t, rclone);
    const cwd = tempDir(t, 'cadaver-files');
    fs.writeFileSync(path.join(cwd, 'up.txt'), 'cadaver payload é\n');
    const commands = [
      'mkcol dir',
      'cd dir',
      'put up.txt',
      'get up.txt down.txt',
      'lock up.txt',
      'unlock up.txt',
      'get nothere.txt x',
      'cd nope',
    ];
    const session = await runCadaver(t, cadaver, peer, commands, { cwd, timeoutMs: 30_000 });
    assert.deepEqual(
      session.steps.map((s) => `${s.command}: ${s.ok}`),
      [...commands.map((c) => `${c}: ${!/nothere|nope/.test(c)}`), 'quit: true'],
      describeCadaver(session),
    );
    assert.equal(fs.readFileSync(path.join(cwd, 'down.txt'), 'utf8'), 'cadaver payload é\n');
  });

  it(
    'rclone against rclone serve webdav: transfers are counted from its stats, check finds differences',
    { timeout: 60_000 },
    async (t) => {
      const rclone = requireTool(t, 'rclone');
      if (!rclone) return;
      const peer = await rcloneServe(t, rclone);
      const local = tempDir(t, 'rclone-local');
      fs.mkdirSync(path.join(local, 'a é'));
      fs.writeFileSync(path.join(local, 'a é', '日本 😀.txt'), 'x');
      fs.writeFileSync(path.join(local, 'empty'), '');
      const client = await rcloneClient(t, rclone, peer);
      const first = await client.sync(local, 'coffre:tree', 30_000);
      assert.equal(first.code, 0, describeRclone(first));
      assert.equal(first.stats?.transfers, 2, describeRclone(first));
      assert.deepEqual(first.copied.sort(), ['a é/日本 😀.txt', 'empty']);
      const second = await client.sync(local, 'coffre:tree', 30_000);
      assert.equal(second.stats?.transfers, 0, describeRclone(second));
      // The same size, other bytes: only --download tells them apart (WebDAV gives no hash here).
      fs.writeFileSync(path.join(local, 'a é', '日本 😀.txt'), 'y');
      const check = await client.check(local, 'coffre:tree', { download: true, timeoutMs: 30_000 });
      assert.equal(check.run.code, 1, describeRclone(check.run));
      assert.deepEqual(check.differences, ['* a é/日本 😀.txt']);
      assert.equal(check.same, 1);
      assert.deepEqual(await client.list('coffre:tree'), ['a é/', 'a é/日本 😀.txt', 'empty']);
    },
  );
});
