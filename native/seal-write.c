/*
 * An upload's encryption and checksum as threadpool jobs (src/content/file-encrypt-stream.ts). The
 * stream codecs do the same in two cipher worker threads: each batch is posted to a hashing
 * thread, moved on to a sealing thread, sealed, handed to the threadpool to be written, and
 * answered; every crossing wakes a thread, and the workers' message handling, buffers and
 * collections cost about as much as the crypto itself. Here the event loop only
 * queues jobs over the request's own body chunks, as a bare server queues its writes.
 *
 * Exports:
 *   sealWrite(fd, position, key, header, firstIndex, final, chunks, withHeader)
 *       -> Promise<number>: seals the concatenation of the Uint8Arrays `chunks` as consecutive
 *          segments of the stream whose 16-byte `header` is given (it is every segment's
 *          associated data and holds the segment size and nonce prefix), the first being segment
 *          `firstIndex`, with the 32-byte `key`; writes them (after the header itself when
 *          `withHeader`) at `position` of `fd`, and resolves with the bytes written. Without
 *          `final` the chunks hold whole segments only; with it, the last segment (short, or
 *          empty when the chunks are) carries the final flag. Rejects with a node:fs-like error
 *          when the write fails. The sealed bytes go through memory of the job's own, freed when
 *          it ends: never a JavaScript buffer, which only a garbage collection would free (one
 *          kept by a long upload's stream lives until a full collection).
 *   detachBuffers(arrayBuffers) -> the ArrayBuffers detached: their memory is freed now, not at the
 *          garbage collection that would find them dead (for an upload's body chunks, often a full
 *          one: see src/content/file-encrypt-stream.ts); views of them read as empty afterwards
 *   sha256(midstate?) -> a SHA-256 context, new, or resuming a midstate
 *   sha256Midstate(context) -> Buffer: 40 bytes, the state words H0..H7 then the count of bytes
 *          hashed (64-bit), all big-endian; only at a 64-byte boundary (a resumable upload
 *          hashes whole segments, and keeps this between requests and instances)
 *   sha256Update(context, chunks) -> Promise<void>: hashes the chunks' bytes, in order, on the
 *          threadpool; one update at a time per context (a second one throws)
 *   sha256Digest(context) -> Buffer: the 32-byte digest; the context is then spent
 * Each sealWrite has its own cipher context, so jobs of one stream may run on several pool
 * threads at once. The caller keeps the descriptor open and the chunks untouched until the
 * promise settles.
 */
#define _GNU_SOURCE
/* The low-level SHA-256 API (deprecated, not removed, in OpenSSL 3) is the one whose state can be
 * read and set: EVP's context is opaque. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "coffre.h"
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIGEST_BYTES 32

struct seal_write_job {
  napi_async_work work;
  napi_deferred deferred;
  /* Keeps the chunks (and so their memory) alive while the job runs. */
  napi_ref chunks_ref;
  int fd, final, with_header;
  int64_t position;
  uint8_t key[KEY_BYTES], header[HEADER_BYTES];
  uint32_t first_index;
  struct iovec *chunks;
  size_t count, input_bytes;
  size_t segments, written;
  /* An errno and the call that failed; 0 when it worked. */
  int error;
  const char *syscall;
};

/* Feeds `length` bytes of the chunks, from (*chunk, *offset) on, to the cipher into `out`. */
static int update_from_chunks(EVP_CIPHER_CTX *ctx, const struct iovec *chunks, size_t *chunk, size_t *offset, size_t length, uint8_t *out) {
  int n;
  while (length > 0) {
    size_t available = chunks[*chunk].iov_len - *offset;
    if (available == 0) {
      (*chunk)++;
      *offset = 0;
      continue;
    }
    size_t take = available < length ? available : length;
    if (EVP_CipherUpdate(ctx, out, &n, (const uint8_t *)chunks[*chunk].iov_base + *offset, (int)take) != 1 || (size_t)n != take) return 0;
    out += take;
    *offset += take;
    length -= take;
  }
  return 1;
}

static void seal_write(napi_env env, void *data) {
  (void)env;
  struct seal_write_job *job = data;
  size_t segment_size = (size_t)1 << job->header[5];
  EVP_CIPHER_CTX *ctx = gcm_context(job->key, 1);
  if (ctx == NULL) {
    job->error = ENOSYS;
    job->syscall = "EVP_aes_256_gcm";
    return;
  }
  size_t at = job->with_header ? HEADER_BYTES : 0;
  uint8_t *out = malloc(at + job->input_bytes + job->segments * TAG_BYTES);
  if (out == NULL) {
    EVP_CIPHER_CTX_free(ctx);
    job->error = ENOMEM;
    job->syscall = "malloc";
    return;
  }
  memcpy(out, job->header, at);
  uint8_t nonce[NONCE_BYTES];
  size_t left = job->input_bytes, chunk = 0, offset = 0;
  uint32_t index = job->first_index;
  /* A final run always ends with a final segment, an empty one when it has no bytes. */
  while (left > 0 || job->final) {
    size_t plain = left < segment_size ? left : segment_size;
    int n, last = job->final && plain == left;
    segment_nonce(nonce, job->header, index, last);
    if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, 1) != 1 || EVP_CipherUpdate(ctx, NULL, &n, job->header, HEADER_BYTES) != 1 ||
        !update_from_chunks(ctx, job->chunks, &chunk, &offset, plain, out + at) || EVP_CipherFinal_ex(ctx, out + at + plain, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out + at + plain) != 1) {
      EVP_CIPHER_CTX_free(ctx);
      free(out);
      job->error = EIO;
      job->syscall = "EVP_EncryptFinal";
      return;
    }
    at += plain + TAG_BYTES;
    left -= plain;
    index++;
    if (last) break;
  }
  EVP_CIPHER_CTX_free(ctx);
  size_t done = 0;
  while (done < at) {
    ssize_t n = pwrite(job->fd, out + done, at - done, job->position + (int64_t)done);
    if (n < 0) {
      if (errno == EINTR) continue;
      job->error = errno;
      job->syscall = "write";
      break;
    }
    done += (size_t)n;
  }
  free(out);
  job->written = done;
}

static void free_seal_write_job(napi_env env, struct seal_write_job *job) {
  if (job->chunks_ref) napi_delete_reference(env, job->chunks_ref);
  if (job->work) napi_delete_async_work(env, job->work);
  OPENSSL_cleanse(job->key, KEY_BYTES);
  free(job->chunks);
  free(job);
}

static void seal_write_complete(napi_env env, napi_status status, void *data) {
  struct seal_write_job *job = data;
  napi_value result;
  if (status != napi_ok) {
    napi_reject_deferred(env, job->deferred, coded_error(env, "ECANCELED", "the write was cancelled"));
  } else if (job->error) {
    napi_reject_deferred(env, job->deferred, system_error(env, job->error, job->syscall));
  } else {
    napi_create_double(env, (double)job->written, &result);
    napi_resolve_deferred(env, job->deferred, result);
  }
  free_seal_write_job(env, job);
}

/* Queues `work` for `job` (freed by `free_job` when that fails); returns its promise, or NULL with an exception pending. */
static napi_value queue_job(napi_env env, const char *name, napi_async_execute_callback execute, napi_async_complete_callback complete, void *job, napi_deferred *deferred,
                            napi_async_work *work) {
  napi_value promise, resource_name;
  if (napi_create_promise(env, deferred, &promise) != napi_ok || napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_create_async_work(env, NULL, resource_name, execute, complete, job, work) != napi_ok || napi_queue_async_work(env, *work) != napi_ok) {
    return NULL;
  }
  return promise;
}

static napi_value seal_write_call(napi_env env, napi_callback_info info) {
  size_t argc = 8, key_length, header_length;
  napi_value argv[8], promise;
  uint8_t *key, *header;
  int32_t fd;
  double position;
  bool final, with_header;
  struct seal_write_job *job = calloc(1, sizeof *job);
  if (job == NULL) return fail(env, "out of memory");
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 8 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_value_double(env, argv[1], &position) != napi_ok || !uint8_array(env, argv[2], &key, &key_length) || key_length != KEY_BYTES ||
      !uint8_array(env, argv[3], &header, &header_length) || header_length != HEADER_BYTES || napi_get_value_uint32(env, argv[4], &job->first_index) != napi_ok ||
      napi_get_value_bool(env, argv[5], &final) != napi_ok || !chunk_array(env, argv[6], &job->chunks, &job->count, &job->input_bytes) ||
      napi_get_value_bool(env, argv[7], &with_header) != napi_ok) {
    free_seal_write_job(env, job);
    napi_throw_type_error(env, NULL, "sealWrite(fd, position, 32-byte key, 16-byte header, firstIndex, final, chunks, withHeader)");
    return NULL;
  }
  size_t segment_size = header[5] >= 10 && header[5] <= 24 ? (size_t)1 << header[5] : 0;
  size_t segments = segment_size == 0 ? 0 : job->input_bytes / segment_size + (final && (job->input_bytes % segment_size != 0 || job->input_bytes == 0) ? 1 : 0);
  if (fd < 0 || position < 0 || position > 9007199254740991.0 || segment_size == 0 || (!final && job->input_bytes % segment_size != 0) ||
      (uint64_t)job->first_index + segments > UINT32_MAX || job->input_bytes > INT32_MAX) {
    free_seal_write_job(env, job);
    napi_throw_range_error(env, NULL, "sealWrite: descriptor, position, header or chunk bytes out of range");
    return NULL;
  }
  job->fd = fd;
  job->final = final;
  job->position = (int64_t)position;
  job->with_header = with_header;
  job->segments = segments;
  memcpy(job->key, key, KEY_BYTES);
  memcpy(job->header, header, HEADER_BYTES);
  if (napi_create_reference(env, argv[6], 1, &job->chunks_ref) != napi_ok ||
      (promise = queue_job(env, "coffre:sealWrite", seal_write, seal_write_complete, job, &job->deferred, &job->work)) == NULL) {
    free_seal_write_job(env, job);
    return fail(env, "could not queue the write");
  }
  return promise;
}

/* A SHA-256 context; `busy` while an update job uses it. */
struct hash_context {
  SHA256_CTX sha;
  int busy, spent;
};

#define MIDSTATE_BYTES 40

struct hash_job {
  napi_async_work work;
  napi_deferred deferred;
  /* Keep the context and the chunks alive while the job runs. */
  napi_ref context_ref, chunks_ref;
  struct hash_context *context;
  struct iovec *chunks;
  size_t count, bytes;
  int failed;
};

static void free_hash_context(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

static uint32_t read_be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void write_be32(unsigned char *p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

/* Sets a fresh context to a midstate (see the exports); 0 when the midstate is malformed. */
static int resume_midstate(SHA256_CTX *sha, const unsigned char *midstate, size_t length) {
  if (length != MIDSTATE_BYTES) return 0;
  uint64_t bytes = (uint64_t)read_be32(midstate + 32) << 32 | read_be32(midstate + 36);
  if (bytes % 64 != 0 || bytes > UINT64_MAX / 8) return 0;
  for (int i = 0; i < 8; i++) sha->h[i] = read_be32(midstate + 4 * i);
  sha->Nl = (uint32_t)(bytes * 8);
  sha->Nh = (uint32_t)((bytes * 8) >> 32);
  sha->num = 0;
  return 1;
}

static napi_value sha256_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  void *midstate = NULL;
  size_t midstate_length = 0;
  bool is_buffer = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return fail(env, "sha256(midstate?)");
  if (argc >= 1 && (napi_is_buffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer ||
                    napi_get_buffer_info(env, argv[0], &midstate, &midstate_length) != napi_ok)) {
    napi_valuetype type;
    if (napi_typeof(env, argv[0], &type) != napi_ok || type != napi_undefined) {
      napi_throw_type_error(env, NULL, "sha256(midstate?): the midstate must be a Buffer");
      return NULL;
    }
    midstate = NULL;
  }
  struct hash_context *context = calloc(1, sizeof *context);
  if (context == NULL || SHA256_Init(&context->sha) != 1) {
    free(context);
    return fail(env, "SHA-256 is not available");
  }
  if (midstate != NULL && !resume_midstate(&context->sha, midstate, midstate_length)) {
    free(context);
    napi_throw_range_error(env, NULL, "sha256(midstate): not a midstate at a 64-byte boundary");
    return NULL;
  }
  if (napi_create_external(env, context, free_hash_context, NULL, &result) != napi_ok) {
    free_hash_context(env, context, NULL);
    return fail(env, "out of memory");
  }
  return result;
}

/* The context argument, usable (not spent, no update running); NULL with an exception pending otherwise. */
static struct hash_context *idle_context(napi_env env, napi_value value) {
  struct hash_context *context;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external || napi_get_value_external(env, value, (void **)&context) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a context from sha256()");
    return NULL;
  }
  if (context->busy || context->spent) {
    fail(env, context->spent ? "the SHA-256 context is spent" : "an update of this SHA-256 context is running");
    return NULL;
  }
  return context;
}

static void hash_update(napi_env env, void *data) {
  (void)env;
  struct hash_job *job = data;
  for (size_t i = 0; i < job->count && !job->failed; i++) job->failed = SHA256_Update(&job->context->sha, job->chunks[i].iov_base, job->chunks[i].iov_len) != 1;
}

static void free_hash_job(napi_env env, struct hash_job *job) {
  if (job->context_ref) napi_delete_reference(env, job->context_ref);
  if (job->chunks_ref) napi_delete_reference(env, job->chunks_ref);
  if (job->work) napi_delete_async_work(env, job->work);
  free(job->chunks);
  free(job);
}

static void hash_complete(napi_env env, napi_status status, void *data) {
  struct hash_job *job = data;
  napi_value result;
  job->context->busy = 0;
  if (status != napi_ok || job->failed) {
    /* Bytes may be missing from it: no digest of it may be taken. */
    job->context->spent = 1;
    napi_reject_deferred(env, job->deferred, coded_error(env, "ERR_HASH", status != napi_ok ? "the hashing was cancelled" : "SHA-256 failed"));
  } else {
    napi_get_undefined(env, &result);
    napi_resolve_deferred(env, job->deferred, result);
  }
  free_hash_job(env, job);
}

static napi_value sha256_update_call(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], promise;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "sha256Update(context, chunks)");
    return NULL;
  }
  struct hash_context *context = idle_context(env, argv[0]);
  if (context == NULL) return NULL;
  struct hash_job *job = calloc(1, sizeof *job);
  if (job == NULL) return fail(env, "out of memory");
  job->context = context;
  if (!chunk_array(env, argv[1], &job->chunks, &job->count, &job->bytes)) {
    free_hash_job(env, job);
    napi_throw_type_error(env, NULL, "sha256Update(context, chunks): chunks must be an array of Uint8Arrays");
    return NULL;
  }
  if (napi_create_reference(env, argv[0], 1, &job->context_ref) != napi_ok || napi_create_reference(env, argv[1], 1, &job->chunks_ref) != napi_ok ||
      (promise = queue_job(env, "coffre:sha256Update", hash_update, hash_complete, job, &job->deferred, &job->work)) == NULL) {
    free_hash_job(env, job);
    return fail(env, "could not queue the hashing");
  }
  context->busy = 1;
  return promise;
}

static napi_value sha256_digest_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  void *digest;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "sha256Digest(context)");
    return NULL;
  }
  struct hash_context *context = idle_context(env, argv[0]);
  if (context == NULL) return NULL;
  if (napi_create_buffer(env, DIGEST_BYTES, &digest, &result) != napi_ok) return fail(env, "out of memory");
  context->spent = 1;
  if (SHA256_Final(digest, &context->sha) != 1) return fail(env, "SHA-256 failed");
  return result;
}

static napi_value sha256_midstate_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  void *data;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "sha256Midstate(context)");
    return NULL;
  }
  struct hash_context *context = idle_context(env, argv[0]);
  if (context == NULL) return NULL;
  if (context->sha.num != 0) return fail(env, "sha256Midstate: the bytes hashed are not a multiple of 64");
  if (napi_create_buffer(env, MIDSTATE_BYTES, &data, &result) != napi_ok) return fail(env, "out of memory");
  unsigned char *out = data;
  uint64_t bytes = ((uint64_t)context->sha.Nh << 32 | context->sha.Nl) / 8;
  for (int i = 0; i < 8; i++) write_be32(out + 4 * i, context->sha.h[i]);
  write_be32(out + 32, (uint32_t)(bytes >> 32));
  write_be32(out + 36, (uint32_t)bytes);
  return result;
}

static napi_value detach_buffers_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  bool is_array = false;
  uint32_t length, detached = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[0], &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "detachBuffers(arrayBuffers)");
    return NULL;
  }
  for (uint32_t i = 0; i < length; i++) {
    napi_value buffer;
    bool is_array_buffer = false;
    if (napi_get_element(env, argv[0], i, &buffer) != napi_ok || napi_is_arraybuffer(env, buffer, &is_array_buffer) != napi_ok || !is_array_buffer) {
      napi_throw_type_error(env, NULL, "detachBuffers(arrayBuffers): expected ArrayBuffers");
      return NULL;
    }
    /* One that cannot be detached (a wasm memory, say) is left to the collector. */
    if (napi_detach_arraybuffer(env, buffer) == napi_ok) detached++;
  }
  napi_create_uint32(env, detached, &result);
  return result;
}

int register_seal_write(napi_env env, napi_value exports) {
  return export_function(env, exports, "sealWrite", seal_write_call) && export_function(env, exports, "detachBuffers", detach_buffers_call) && export_function(env, exports, "sha256", sha256_call) &&
         export_function(env, exports, "sha256Update", sha256_update_call) && export_function(env, exports, "sha256Digest", sha256_digest_call) &&
         export_function(env, exports, "sha256Midstate", sha256_midstate_call);
}
