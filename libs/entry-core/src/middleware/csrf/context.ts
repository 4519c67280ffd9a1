import { createContextKey } from '../../call/context-key.js';
import type { CallContext } from '../call.js';

/**
 * The CSRF token of a call that passed the csrf middleware: the one its response's cookie holds.
 * A handler rendering an HTML form puts it into the form's field (`tokenLookup: form:_csrf`).
 */
export function csrfTokenOf(call: CallContext): string | undefined {
  return call.get(CSRF_TOKEN);
}

/** The context key csrfTokenOf reads: the token this call's response cookie holds. */
export const CSRF_TOKEN = createContextKey<string | undefined>('svcboot.csrf.token', undefined);
