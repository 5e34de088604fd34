import type { AppContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { search } from './search.use-case.js';

/** The search service of a context: its use case bound to it. */
export function searchService(ctx: AppContext) {
  return bindContext(ctx, { search });
}
