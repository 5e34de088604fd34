/*
 * Coffre's optional native addon (Node-API, so one build serves every Node version and worker
 * threads), loaded by src/native.ts. Built by scripts/build-native.mjs after `npm ci`; without it
 * Coffre does the same work in JavaScript, slower. Its parts:
 *   aes-gcm.c        AES-256-GCM of stream segments through the OpenSSL inside Node
 *   durable-files.c  a small file created, written and synced, or a directory synced, as one
 *                    threadpool job each
 *   read-open.c      a run of a blob's sealed segments read and opened as one threadpool job
 *                    (a download's decryption)
 */
#include "coffre.h"

napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok && napi_set_named_property(env, exports, name, fn) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!register_aes_gcm(env, exports) || !register_durable_files(env, exports) || !register_read_open(env, exports)) return NULL;
  return exports;
}
