import type { ColumnType, Generated } from 'kysely';

/** The `users` table (`id`, `name`, created/updated/deleted times). Timestamps stay in the database; the API shows `User`. */
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

/** A user as JSON: `id` and `name`, nothing else. */
export interface User {
  id: number;
  name: string;
}

/** What GET /v1/user/:id answers for a missing row (200 with empty fields, not 404: ARCHITECTURE.md §7). */
export const EMPTY_USER: User = { id: 0, name: '' };
