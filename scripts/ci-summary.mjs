// Prints the last line of a CI run, "N passed, N failed", from vitest's JSON report, and exits with
// a status that agrees with it. A test file that fails without a failed test (it did not import, a
// hook threw, an error escaped every test) counts as one failure: a run that loaded no tests from it
// has not passed. Usage: node scripts/ci-summary.mjs <vitest.json> <vitest exit status>
import { readFileSync } from 'node:fs';

const [file, statusText = '0'] = process.argv.slice(2);
const vitestStatus = Number(statusText);

let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`the test run wrote no readable results (${error.message})`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const files = report.testResults ?? [];
const failedFiles = files.filter((f) => f.status === 'failed');
const filesWithoutFailedTest = failedFiles.filter(
  (f) => !(f.assertionResults ?? []).some((test) => test.status === 'failed'),
);
for (const f of filesWithoutFailedTest) {
  const reason = (f.message || 'failed outside any test').split('\n')[0];
  console.log(`failed file: ${f.name}: ${reason}`);
}
let failed = report.numFailedTests + filesWithoutFailedTest.length;
// vitest also fails a run for errors it cannot pin to a file (unhandled rejections after a test).
const unexplained = vitestStatus !== 0 && failed === 0;
if (unexplained) {
  console.log(
    `vitest exited with status ${vitestStatus} without a failed test or file (an unhandled error?)`,
  );
  failed = 1;
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const details =
  filesWithoutFailedTest.length > 0
    ? ` (${report.numFailedTests} tests, ${filesWithoutFailedTest.length} files)`
    : '';
console.log(
  `${report.numPassedTests} passed, ${failed} failed${details}` + (skipped ? `, ${skipped} skipped` : ''),
);
process.exit(failed > 0 ? 1 : 0);
