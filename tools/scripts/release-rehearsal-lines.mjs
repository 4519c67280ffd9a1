#!/usr/bin/env node
// The install lines of every README (README.md of the repository, of each app, lib and tool):
// each command line in a fenced block that runs `npm install` (or `npm i`, `npm add`) of an
// @svcboot package, its trailing comment dropped. The release rehearsal runs each, as written,
// against the registry it published to. Prints <file>\t<line> per line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const files = ['README.md'];
for (const parent of ['apps', 'libs', 'tools']) {
  for (const entry of readdirSync(path.join(root, parent), { withFileTypes: true })) {
    const file = path.join(parent, entry.name, 'README.md');
    if (entry.isDirectory() && existsSync(path.join(root, file))) files.push(file);
  }
}
for (const file of files) {
  const text = readFileSync(path.join(root, file), 'utf-8');
  for (const block of text.matchAll(/^```\w*[^\n]*\n([\s\S]*?)^```$/gm)) {
    for (const raw of block[1].split('\n')) {
      const line = raw.replace(/\s+#.*$/, '').trim();
      if (/^npm (install|i|add)\b/.test(line) && /(^|\s)@svcboot\//.test(line))
        console.log(`${file}\t${line}`);
    }
  }
}
