import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorTable } from '@svcboot/entry-core';
import { expect, it } from 'vitest';
import { jwtErrors } from './errors.js';

it('README lists every error code of the catalogue, as errorTable writes it', () => {
  const readme = readFileSync(
    path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md'),
    'utf8',
  );
  expect(readme).toContain(errorTable(jwtErrors));
});
