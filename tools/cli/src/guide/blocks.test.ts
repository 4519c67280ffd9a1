import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { guideBlocks } from './blocks.js';

// docs/guide.md is executed by guide.rehearsal.test.ts, in the release rehearsal (once per CI
// run, against the registry it publishes to). This checks, in every `npm test`, that each of its
// blocks says how it is executed and that the calls and their shown outputs pair up.
const guide = fileURLToPath(new URL('../../../../docs/guide.md', import.meta.url));

test('every block of docs/guide.md is run, written, served or a call with its shown output', async () => {
  const blocks = await guideBlocks(guide);
  const kinds = blocks.map((b, i) => {
    if (b.file !== undefined) return 'file';
    if (b.lang === 'json') {
      const before = blocks[i - 1];
      expect(
        before?.info.startsWith('guide-call') && !/status=/.test(before.info),
        `${path.basename(guide)} line ${b.line}: a json block follows a guide-call without status=`,
      ).toBe(true);
      return 'json';
    }
    expect(b.lang, `${path.basename(guide)} line ${b.line}`).toBe('sh');
    expect(b.info, `${path.basename(guide)} line ${b.line}`).toMatch(
      /^guide(-serve|-call( status=\d{3})?)?$/,
    );
    return b.info.split(' ')[0]!;
  });
  for (const b of blocks.filter((b) => b.pending !== undefined))
    expect(b.info, `${path.basename(guide)} line ${b.line}: pending= is for run blocks`).toBe(
      'guide',
    );
  expect(kinds.filter((k) => k === 'guide-serve')).toHaveLength(1);
  expect(kinds.indexOf('guide-serve')).toBeLessThan(kinds.indexOf('guide-call'));
});

test('pending=WHY is read off the info string', async () => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guide-blocks-'));
  try {
    const page = path.join(dir, 'page.md');
    await writeFile(page, '# t\n\n```sh guide pending=issue-40\nnpx svc deploy\n```\n');
    const [block] = await guideBlocks(page);
    expect(block).toMatchObject({ info: 'guide', pending: 'issue-40', line: 3 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a block without an info string is refused', async () => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guide-blocks-'));
  try {
    const page = path.join(dir, 'page.md');
    await writeFile(page, '# t\n\n```sh\nnpm start\n```\n');
    await expect(guideBlocks(page)).rejects.toThrow(/line 3: a ```sh block without "guide"/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
