/* What the parts of the native addon share (see module.c). */
#ifndef COFFRE_NATIVE_H
#define COFFRE_NATIVE_H
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Throws an Error with `message`; returns NULL for the caller to return. */
napi_value fail(napi_env env, const char *message);
/* Sets exports[name] to a function calling `cb`; 0 when that failed. */
int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb);

/* The bytes of a Uint8Array (Buffers included); 0 when the value is not one. */
int uint8_array(napi_env env, napi_value value, uint8_t **data, size_t *length);
/*
 * The Uint8Arrays of an array, as iovecs in a new allocation (NULL when empty; the caller frees
 * it), with their count and total bytes; 0 when the value is not such an array (nothing to free).
 */
int chunk_array(napi_env env, napi_value value, struct iovec **chunks, size_t *count, size_t *total);
/* A new Error with `code` and `message`. */
napi_value coded_error(napi_env env, const char *code, const char *message);
/* A new Error shaped like node:fs's for a failed system call (code, errno, syscall). */
napi_value system_error(napi_env env, int error_number, const char *syscall);

/*
 * The stored format of a blob (src/content/format.ts, docs/storage-format.md): a 16-byte header, the associated
 * data of every segment, holding log2 of the segment size at byte 5 and the 7-byte nonce prefix
 * at byte 9; then segments, each sealed with AES-256-GCM and followed by its 16-byte tag.
 */
#define KEY_BYTES 32
#define HEADER_BYTES 16
#define TAG_BYTES 16
#define NONCE_BYTES 12
/* Writes the nonce of segment `index` of the stream whose header is given (prefix, big-endian index, final flag). */
void segment_nonce(uint8_t nonce[NONCE_BYTES], const uint8_t header[HEADER_BYTES], uint32_t index, int final);
/* A new AES-256-GCM context for the 32-byte key, to seal (`encrypt`) or open; NULL when OpenSSL fails. */
void *gcm_context(const uint8_t *key, int encrypt);

int register_aes_gcm(napi_env env, napi_value exports);
int register_durable_files(napi_env env, napi_value exports);
int register_read_open(napi_env env, napi_value exports);
int register_seal_write(napi_env env, napi_value exports);
#endif
