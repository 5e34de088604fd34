import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';

// Placeholder while the folder module is being written.
export function folderRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
