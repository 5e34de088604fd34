/* What the parts of the native addon share (see module.c). */
#ifndef COFFRE_NATIVE_H
#define COFFRE_NATIVE_H
#include <node_api.h>

/* Throws an Error with `message`; returns NULL for the caller to return. */
napi_value fail(napi_env env, const char *message);
/* Sets exports[name] to a function calling `cb`; 0 when that failed. */
int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb);

int register_aes_gcm(napi_env env, napi_value exports);
int register_durable_files(napi_env env, napi_value exports);
int register_read_open(napi_env env, napi_value exports);
#endif
