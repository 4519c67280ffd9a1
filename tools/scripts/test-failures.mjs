#!/usr/bin/env node
// Reads the output of an `nx ... -t test --outputStyle=stream` run (each line prefixed with its
// project's name) and prints, per project, what vitest said of its failed tests: the "Failed
// Tests" section (each test's name, error and code frame) and its "Test Files"/"Tests" lines, so
// that the end of a long CI log names the failure instead of only nx's "Failed tasks" list.
//   node tools/scripts/test-failures.mjs LOG... [--lines N]
// N (default 80) bounds the lines printed per project. Prints nothing when no project failed.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let limit = 80;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--lines') limit = Number(args[++i]);
  else files.push(args[i]);
}
if (files.length === 0 || !Number.isInteger(limit) || limit < 1) {
  console.error('usage: node tools/scripts/test-failures.mjs LOG... [--lines N]');
  process.exit(2);
}

const ansi = /\u001b\[[0-9;]*[A-Za-z]/g;
const prefixed = /^([@\w./-]+):\s(.*)$/;

/** project → its lines, in order, without the prefix and the colours */
const byProject = new Map();
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  for (const raw of text.split('\n')) {
    const match = prefixed.exec(raw.replace(ansi, ''));
    if (!match) continue;
    const [, project, line] = match;
    let lines = byProject.get(project);
    if (!lines) byProject.set(project, (lines = []));
    lines.push(line);
  }
}

for (const [project, lines] of byProject) {
  const out = [];
  let inFailed = false;
  for (const line of lines) {
    if (/⎯+\s*Failed Tests?\s+\d+|⎯+\s*Unhandled Errors?|⎯+\s*Failed Suites?\s+\d+/.test(line))
      inFailed = true;
    else if (/^\s*Test Files\s/.test(line)) {
      inFailed = false;
      if (/failed/.test(line)) out.push(line);
    } else if (/^\s*Tests\s+\d/.test(line) && /failed/.test(line)) out.push(line);
    if (inFailed) out.push(line);
    // project-test.sh's own failure: the project's type check
    if (!inFailed && /tsc -p tsconfig.json --noEmit found type errors/.test(line)) out.push(line);
  }
  if (!out.some((line) => /failed|FAIL|Error/.test(line))) continue;
  console.log(`== ${project}: what vitest said of its failures`);
  const shown = out.slice(0, limit);
  for (const line of shown) console.log(`  ${line}`);
  if (out.length > shown.length)
    console.log(`  … ${out.length - shown.length} more lines in the full log`);
}
