import type { ColumnType, Generated } from 'kysely';

/** The `users` table (SPEC.md 2.4). Timestamps stay in the database; the API shows `User`. */
export interface UsersTable {
  id: Generated<number>;
  name: string;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date>;
  /** Set by a (soft) delete; rows with it are gone for the API. */
  deleted_at: ColumnType<Date | null, never, Date>;
}

export interface Database {
  users: UsersTable;
}

/** A user as JSON: SPEC.md 2.4's `id` and `name`, nothing else. */
export interface User {
  id: number;
  name: string;
}

/** What GET /v1/user/:id answers for a missing row (SPEC.md 4.4: 200, not 404). */
export const EMPTY_USER: User = { id: 0, name: '' };
