// entry-sql's own test helpers (not part of the published package; other packages use @svcboot/testkit's).
export { adminQuery, uniqueDatabase, databaseExists, dropDatabase, PG_ADDR } from './pg.js';
