import { describe, expect, it } from 'vitest';
import { compileTemplate } from './template.js';

describe('HttpRule path templates', () => {
  it('matches literals, {var}, {var=pattern}, ** and verbs', () => {
    expect(compileTemplate('/v1/hello', 't').match('/v1/hello')).toEqual([]);
    expect(compileTemplate('/v1/hello', 't').match('/v1/hello/x')).toBeUndefined();
    const shelf = compileTemplate('/v1/{name=shelves/*}', 't');
    expect(shelf.variables).toEqual(['name']);
    expect(shelf.match('/v1/shelves/s1')).toEqual(['shelves/s1']);
    expect(shelf.match('/v1/shelves/s1/books')).toBeUndefined();
    expect(shelf.match('/v1/other/s1')).toBeUndefined();
    const nested = compileTemplate('/v1/{book.name=shelves/*/books/*}:publish', 't');
    expect(nested.variables).toEqual(['book.name']);
    expect(nested.match('/v1/shelves/a/books/b:publish')).toEqual(['shelves/a/books/b']);
    expect(nested.match('/v1/shelves/a/books/b')).toBeUndefined();
    const rest = compileTemplate('/v1/files/{path=**}', 't');
    expect(rest.match('/v1/files/a/b/c.txt')).toEqual(['a/b/c.txt']);
    const two = compileTemplate('/v1/users/{user}/items/{item}', 't');
    expect(two.match('/v1/users/u%20x/items/7')).toEqual(['u x', '7']);
    expect(compileTemplate('/', 't').match('/')).toEqual([]);
  });

  it('ranks templates by their literal text', () => {
    expect(compileTemplate('/v1/shelves:search', 't').literalWeight).toBeGreaterThan(
      compileTemplate('/v1/{name}', 't').literalWeight,
    );
  });

  it('rejects bad templates with the template and where it came from', () => {
    expect(() => compileTemplate('v1/x', 'gw.yaml')).toThrow(
      /gw.yaml: path template "v1\/x" must start with "\/"/,
    );
    expect(() => compileTemplate('/v1/{name', 'gw.yaml')).toThrow(/unclosed/);
    expect(() => compileTemplate('/v1/{9bad}', 'gw.yaml')).toThrow(/bad field path/);
    expect(() => compileTemplate('/v1//x', 'gw.yaml')).toThrow(/bad path segment/);
  });
});
