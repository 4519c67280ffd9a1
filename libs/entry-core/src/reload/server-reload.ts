import { coreErrors } from '../errors.js';
import type { CallChain } from '../middleware/call.js';
import { planChainReload, type MiddlewareConfig } from '../middleware/options.js';
import { refusedReload, type ConfigChange, type EntryReload } from './entry-reload.js';

/** What a server entry's options that are not `middleware.*` hold, for the refusal's message. */
function notLiveBecause(path: string): string {
  const top = path.split('.')[0]!;
  if (top === 'port') return 'the port the entry listens on';
  if (/tls|cert|insecure/i.test(top)) return 'TLS is set up when the entry starts';
  return 'the server reads it once when the entry starts';
}

/**
 * `EntryPlugin.reload` of a server entry (grpc, httpserver): its `middleware.*` options change
 * live (planChainReload: the chain's stage is swapped, calls in flight keep theirs); any other
 * changed option (port, TLS, routes, limits of the server itself) refuses the reload with
 * `SVC_RELOAD_NOT_LIVE` at its path (README, "Reload").
 */
export function reloadServerEntry(
  chain: CallChain | undefined,
  next: { readonly middleware: MiddlewareConfig },
  change: ConfigChange<unknown>,
): EntryReload {
  const refused = change.paths
    .filter((p) => p !== 'middleware' && !p.startsWith('middleware.'))
    .map((p) => ({
      path: `${change.configPath}.${p}`,
      message: coreErrors.SVC_RELOAD_NOT_LIVE.message(notLiveBecause(p)),
      code: 'SVC_RELOAD_NOT_LIVE',
    }));
  if (chain === undefined)
    return refusedReload([
      ...refused,
      {
        path: `${change.configPath}.middleware`,
        message: coreErrors.SVC_RELOAD_NOT_LIVE.message('the entry has not built its chain yet'),
        code: 'SVC_RELOAD_NOT_LIVE',
      },
    ]);
  const plan = planChainReload(chain, next.middleware);
  if (refused.length === 0) return plan;
  // Every problem is listed at once, the middleware's too.
  plan.discard?.();
  return refusedReload([...refused, ...plan.refused]);
}
