// summary.cjs REPORT STATUS LABEL: one run's "LABEL: N passed, N failed, N skipped"
// line from its vitest JSON report, then a line per failure (the test, or the
// file when the failure was outside its tests: an import, a hook), so that a CI
// log cut to its end still names them; the counts go to fd 3 for the total. A
// run whose status is not 0 counts at least one failure, with or without a report.
"use strict";
const { readFileSync, writeSync } = require("node:fs");

const [reportPath, status, label] = process.argv.slice(2);

/** One line of plain text: no terminal colours, no line breaks, at most 300 characters. */
const oneLine = (text) => String(text ?? "").replace(/\x1b\[[0-9;]*m/g, "").split(/\r?\n/).find((line) => line.trim() !== "")?.trim().slice(0, 300) ?? "";

/** A test file's path from the checkout's root, wherever that checkout was (the rootless run's copy too). */
const testPath = (name) => String(name).replace(/^.*?\/(?=test\/)/, "");

function failures(report) {
  return (report.testResults ?? []).flatMap((file) => {
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    const lines = failed.map((test) => `  FAILED ${testPath(file.name)} > ${oneLine(test.fullName)}: ${oneLine(test.failureMessages?.[0])}`);
    if (file.status === "failed" && failed.length === 0) lines.push(`  FAILED ${testPath(file.name)}: ${oneLine(file.message)}`);
    return lines;
  });
}

let report;
try {
  report = JSON.parse(readFileSync(reportPath, "utf8"));
} catch {
  console.log(`${label}: no report (the run ended before its tests)`);
  report = { numPassedTests: 0, numFailedTests: 1, numPendingTests: 0, numTodoTests: 0 };
}
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
for (const line of failures(report)) console.log(line);
if (status !== "0" && report.numFailedTests === 0) console.log(`${label}: the run FAILED outside the tests (see above: global setup, or the real network changed)`);
writeSync(3, `${report.numPassedTests} ${Math.max(report.numFailedTests, status === "0" ? 0 : 1)} ${skipped}\n`);
