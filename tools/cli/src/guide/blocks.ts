import { readFile } from 'node:fs/promises';

/** One fenced block of a guide: ```lang info, where info may be `file=PATH`. */
export interface GuideBlock {
  lang: string;
  /** The info string after the language (`guide`, `guide-call status=401`, `file=src/main.ts`). */
  info: string;
  /** The file the block is, from `file=PATH`. */
  file: string | undefined;
  /**
   * From `pending=WHY`: a block the guide's test does not run yet, because what it needs is not
   * merged (WHY names it); removing `pending=` turns it on.
   */
  pending: string | undefined;
  body: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

/**
 * The fenced blocks of a markdown page, in order. A block with no info string beyond its language
 * is an error unless its language is `json` (shown output): every other block must say whether it
 * is run (`guide`, `guide-serve`, `guide-call`) or written (`file=PATH`).
 */
export async function guideBlocks(page: string): Promise<GuideBlock[]> {
  const text = await readFile(page, 'utf8');
  const blocks: GuideBlock[] = [];
  for (const m of text.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const lang = m[1]!;
    const info = m[2]!.trim();
    const line = text.slice(0, m.index).split('\n').length;
    const file = /(?:^|\s)file=(\S+)/.exec(info)?.[1];
    if (file === undefined && !/^guide(-serve|-call)?\b/.test(info) && lang !== 'json')
      throw new Error(
        `${page} line ${line}: a \`\`\`${lang} block without "guide", "guide-serve", "guide-call" or "file=PATH"; every block is executed`,
      );
    const pending = /(?:^|\s)pending=(\S+)/.exec(info)?.[1];
    blocks.push({
      lang,
      info: info.replace(/\s*pending=\S+/, ''),
      file,
      pending,
      body: m[3]!,
      line,
    });
  }
  return blocks;
}
