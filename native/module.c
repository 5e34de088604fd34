/*
 * Coffre's optional native addon (Node-API, so one build serves every Node version and worker
 * threads), loaded by src/native.ts. Built by scripts/build-native.mjs after `npm ci`; without it
 * Coffre does the same work in JavaScript, slower. Its parts:
 *   aes-gcm.c        AES-256-GCM of stream segments through the OpenSSL inside Node
 *   durable-files.c  a small file created, written and synced, or a directory synced, as one
 *                    threadpool job each
 *   read-open.c      a run of a blob's sealed segments read and opened as one threadpool job
 *                    (a download's decryption)
 *   seal-write.c     a run of an upload's segments sealed and written into its blob file as one
 *                    threadpool job, and SHA-256 of the plaintext as threadpool jobs (an upload's
 *                    encryption and checksum)
 * and, here, the helpers they share.
 */
#include "coffre.h"
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok && napi_set_named_property(env, exports, name, fn) == napi_ok;
}

int uint8_array(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array) return 0;
  if (napi_get_typedarray_info(env, value, &type, length, (void **)data, &buffer, &offset) != napi_ok) return 0;
  return type == napi_uint8_array;
}

int chunk_array(napi_env env, napi_value value, struct iovec **chunks, size_t *count, size_t *total) {
  bool is_array = false;
  uint32_t length;
  *chunks = NULL;
  *count = 0;
  *total = 0;
  if (napi_is_array(env, value, &is_array) != napi_ok || !is_array || napi_get_array_length(env, value, &length) != napi_ok) return 0;
  if (length == 0) return 1;
  if ((*chunks = calloc(length, sizeof **chunks)) == NULL) return 0;
  for (uint32_t i = 0; i < length; i++) {
    napi_value chunk;
    uint8_t *bytes;
    size_t bytes_length;
    if (napi_get_element(env, value, i, &chunk) != napi_ok || !uint8_array(env, chunk, &bytes, &bytes_length)) {
      free(*chunks);
      *chunks = NULL;
      return 0;
    }
    (*chunks)[i].iov_base = bytes;
    (*chunks)[i].iov_len = bytes_length;
    *total += bytes_length;
  }
  *count = length;
  return 1;
}

napi_value coded_error(napi_env env, const char *code, const char *message) {
  napi_value error, message_value, code_value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &message_value);
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value);
  napi_create_error(env, code_value, message_value, &error);
  return error;
}

napi_value system_error(napi_env env, int error_number, const char *syscall) {
  char text[256];
  snprintf(text, sizeof text, "%s: %s, %s", uv_err_name(-error_number), strerror(error_number), syscall);
  napi_value error = coded_error(env, uv_err_name(-error_number), text), value;
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, error, "syscall", value);
  napi_create_int32(env, -error_number, &value);
  napi_set_named_property(env, error, "errno", value);
  return error;
}

void segment_nonce(uint8_t nonce[NONCE_BYTES], const uint8_t header[HEADER_BYTES], uint32_t index, int final) {
  memcpy(nonce, header + 9, 7);
  nonce[7] = (uint8_t)(index >> 24);
  nonce[8] = (uint8_t)(index >> 16);
  nonce[9] = (uint8_t)(index >> 8);
  nonce[10] = (uint8_t)index;
  nonce[11] = final ? 1 : 0;
}

void *gcm_context(const uint8_t *key, int encrypt) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL || EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) != 1 || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_BYTES, NULL) != 1 ||
      EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, encrypt) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}

NAPI_MODULE_INIT() {
  if (!register_aes_gcm(env, exports) || !register_durable_files(env, exports) || !register_read_open(env, exports) || !register_seal_write(env, exports)) return NULL;
  return exports;
}
