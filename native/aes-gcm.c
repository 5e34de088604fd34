/*
 * AES-256-GCM for the segment codecs (src/content/aead.ts), through the OpenSSL that Node itself
 * links (its EVP symbols are exported to addons). node:crypto computes exactly the same, but per
 * 64 KiB segment it builds a cipher object, expands the key again and returns the output in a
 * new buffer to be copied and collected, an overhead that took more time than the AES itself
 * (docs/performance.md).
 * Here one context per stream keeps the expanded key, each call only sets the next nonce, and
 * the output goes straight into the caller's buffer.
 *
 * Exports (Node-API, so one build serves every Node version and worker threads):
 *   context(key)                         -> an opaque AES-256-GCM context for that 32-byte key
 *   seal(ctx, nonce, aad, plain, out, at) -> bytes written at out[at..]: ciphertext then 16-byte tag;
 *                                            `plain` may be an array of up to MAX_PIECES buffers,
 *                                            sealed as their concatenation (a segment that
 *                                            straddles input chunks, without copying it whole first)
 *   open(ctx, nonce, aad, sealed, out, at) -> plaintext bytes written at out[at..], or -1 when the
 *                                            segment does not authenticate (that range is then zeroed)
 */
#include "coffre.h"
#include <openssl/evp.h>
#include <stdint.h>
#include <string.h>

#define MAX_PIECES 16

static void free_context(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)data);
}

static napi_value context(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  uint8_t *key;
  size_t key_length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || !uint8_array(env, argv[0], &key, &key_length) || key_length != KEY_BYTES) {
    return fail(env, "context(key): the key must be 32 bytes");
  }
  /* The direction is set per segment (seal or open). */
  EVP_CIPHER_CTX *ctx = gcm_context(key, 1);
  if (ctx == NULL) return fail(env, "AES-256-GCM is not available");
  if (napi_create_external(env, ctx, free_context, NULL, &result) != napi_ok) {
    EVP_CIPHER_CTX_free(ctx);
    return fail(env, "context(key): out of memory");
  }
  return result;
}

struct segment_call {
  EVP_CIPHER_CTX *ctx;
  uint8_t *nonce, *aad, *out;
  size_t aad_length, out_length;
  /* The input: one buffer, or (seal only) the pieces of an array, in order. */
  uint8_t *input[MAX_PIECES];
  size_t input_lengths[MAX_PIECES], input_length;
  uint32_t pieces, at;
};

/* The input argument: a Uint8Array, or when `allow_pieces`, an array of up to MAX_PIECES of them. */
static int read_input(napi_env env, napi_value value, int allow_pieces, struct segment_call *call) {
  bool is_array = false;
  call->input_length = 0;
  if (allow_pieces && napi_is_array(env, value, &is_array) == napi_ok && is_array) {
    if (napi_get_array_length(env, value, &call->pieces) != napi_ok || call->pieces > MAX_PIECES) return 0;
    for (uint32_t i = 0; i < call->pieces; i++) {
      napi_value piece;
      if (napi_get_element(env, value, i, &piece) != napi_ok || !uint8_array(env, piece, &call->input[i], &call->input_lengths[i])) return 0;
      call->input_length += call->input_lengths[i];
    }
    return 1;
  }
  call->pieces = 1;
  if (!uint8_array(env, value, &call->input[0], &call->input_lengths[0])) return 0;
  call->input_length = call->input_lengths[0];
  return 1;
}

/* Reads (ctx, nonce, aad, input, out, at); 0 (an exception pending) when they are not that. */
static int read_call(napi_env env, napi_callback_info info, int allow_pieces, struct segment_call *call) {
  size_t argc = 6, nonce_length;
  napi_value argv[6];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6 || napi_get_value_external(env, argv[0], (void **)&call->ctx) != napi_ok ||
      !uint8_array(env, argv[1], &call->nonce, &nonce_length) || nonce_length != NONCE_BYTES || !uint8_array(env, argv[2], &call->aad, &call->aad_length) ||
      !read_input(env, argv[3], allow_pieces, call) || !uint8_array(env, argv[4], &call->out, &call->out_length) ||
      napi_get_value_uint32(env, argv[5], &call->at) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected (context, 12-byte nonce, aad, input, out, offset)");
    return 0;
  }
  if (call->input_length > INT32_MAX - TAG_BYTES || call->aad_length > INT32_MAX || call->at > call->out_length) {
    napi_throw_range_error(env, NULL, "segment or offset out of range");
    return 0;
  }
  return 1;
}

static napi_value seal(napi_env env, napi_callback_info info) {
  struct segment_call c;
  napi_value result;
  int n, ok;
  if (!read_call(env, info, 1, &c)) return NULL;
  if (c.out_length - c.at < c.input_length + TAG_BYTES) return fail(env, "seal: the output has no room for the segment and its tag");
  uint8_t *out = c.out + c.at;
  ok = EVP_CipherInit_ex(c.ctx, NULL, NULL, NULL, c.nonce, 1) == 1 && EVP_CipherUpdate(c.ctx, NULL, &n, c.aad, (int)c.aad_length) == 1;
  /* GCM is a stream mode: each update writes exactly as many bytes as it is given, at any length. */
  for (uint32_t i = 0; ok && i < c.pieces; i++) {
    ok = EVP_CipherUpdate(c.ctx, out, &n, c.input[i], (int)c.input_lengths[i]) == 1 && (size_t)n == c.input_lengths[i];
    out += c.input_lengths[i];
  }
  if (!ok || EVP_CipherFinal_ex(c.ctx, out, &n) != 1 || EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out) != 1) {
    return fail(env, "seal: AES-256-GCM failed");
  }
  napi_create_uint32(env, (uint32_t)(c.input_length + TAG_BYTES), &result);
  return result;
}

static napi_value open_segment(napi_env env, napi_callback_info info) {
  struct segment_call c;
  napi_value result;
  uint8_t tag[TAG_BYTES];
  int n;
  if (!read_call(env, info, 0, &c)) return NULL;
  if (c.input_length < TAG_BYTES) return fail(env, "open: the segment is shorter than its tag");
  size_t plain_length = c.input_length - TAG_BYTES;
  if (c.out_length - c.at < plain_length) return fail(env, "open: the output has no room for the plaintext");
  uint8_t *out = c.out + c.at;
  /* The tag is read before decrypting: the output may overlap the input. */
  memcpy(tag, c.input[0] + plain_length, TAG_BYTES);
  int ok = EVP_CipherInit_ex(c.ctx, NULL, NULL, NULL, c.nonce, 0) == 1 && EVP_CipherUpdate(c.ctx, NULL, &n, c.aad, (int)c.aad_length) == 1 &&
           EVP_CipherUpdate(c.ctx, out, &n, c.input[0], (int)plain_length) == 1 && EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) == 1 &&
           EVP_CipherFinal_ex(c.ctx, out + n, &n) == 1;
  if (!ok) {
    /* Decrypted before it was authenticated: none of it may be read. */
    if (plain_length > 0) memset(out, 0, plain_length);
    napi_create_int32(env, -1, &result);
    return result;
  }
  napi_create_int32(env, (int32_t)plain_length, &result);
  return result;
}

int register_aes_gcm(napi_env env, napi_value exports) {
  return export_function(env, exports, "context", context) && export_function(env, exports, "seal", seal) && export_function(env, exports, "open", open_segment);
}
