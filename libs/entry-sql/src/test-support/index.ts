// Test helpers for packages that test against PostgreSQL (not part of the published package).
export { adminQuery, uniqueDatabase, databaseExists, dropDatabase, PG_ADDR } from './pg.js';
