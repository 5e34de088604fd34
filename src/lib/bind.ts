/** A use case: a function of the context it runs in, then of its own arguments. */
type UseCase<C> = (ctx: C, ...args: never[]) => unknown;

/** The use cases with their context bound: what callers of a service see. */
export type Bound<C, T extends Record<string, UseCase<C>>> = {
  [K in keyof T]: T[K] extends (ctx: C, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/**
 * Binds each use case to one context, so a service is a plain object of functions and its
 * callers never pass the context themselves.
 */
export function bindContext<C, T extends Record<string, UseCase<C>>>(ctx: C, useCases: T): Bound<C, T> {
  const bound: Record<string, unknown> = {};
  for (const [name, useCase] of Object.entries(useCases)) {
    bound[name] = (...args: never[]) => useCase(ctx, ...args);
  }
  return bound as Bound<C, T>;
}
