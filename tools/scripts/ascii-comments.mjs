// For bundle-lib.mjs: a bundle's non-ASCII characters, which esbuild leaves only in comments (its
// default `charset: 'ascii'` escapes them everywhere else), written as `\u{...}` text.
//
// Why: V8 keeps a module's source for as long as the module lives (Function.prototype.toString),
// one byte a character when every character is Latin-1 and two bytes when one is not: one
// `…` or `—` in a comment doubles what a 500 KB bundle keeps in the heap.
//
// The source map stays exact: a character is rewritten only where no code follows it on its line
// (a `//` comment, or a block comment that the line does not close before more code), so no
// mapping moves; any other place fails the build, to be reworded.

const NON_ASCII = /[^\x00-\x7f]/gu;

/** `text` with each non-ASCII character in its comments as `\u{hex}`; `file` names it in an error. */
export function asciiComments(text, file) {
  return text.replace(NON_ASCII, (ch, offset) => {
    const end = text.indexOf('\n', offset);
    const rest = text.slice(offset, end === -1 ? text.length : end);
    const close = rest.indexOf('*/');
    if (close !== -1 && rest.slice(close + 2).trim() !== '') {
      const line = text.slice(0, offset).split('\n').length;
      throw new Error(
        `bundle-lib: ${file}:${line} has ${JSON.stringify(ch)} in a comment with code after it on its line; reword the comment in ASCII`,
      );
    }
    return `\\u{${ch.codePointAt(0).toString(16)}}`;
  });
}
