import { SerializerSelector, type SerializerCompiler, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

type Serializer = ReturnType<SerializerCompiler>;

/**
 * A response serializer factory shared by every app that the tests of one process build. Compiling
 * the response schemas of every route is most of the time an app takes to be ready, and each test
 * builds its own app over the same routes: a schema met again reuses what was compiled the first
 * time. The key holds all a serializer depends on: the schema, the shared schemas and the options.
 */
export function sharedSerializers(): SerializerFactory {
  const select = SerializerSelector();
  const compiled = new Map<string, Serializer>();
  return (externalSchemas, options) => {
    const compile = select(externalSchemas, options);
    const context = JSON.stringify([externalSchemas, options]);
    return (route) => {
      const key = `${context}${JSON.stringify(route.schema)}`;
      let serializer = compiled.get(key);
      if (!serializer) {
        serializer = compile(route);
        compiled.set(key, serializer);
      }
      return serializer;
    };
  };
}
