/*
 * A download's decryption as threadpool jobs (src/content/file-decrypt-stream.ts): each job reads a
 * run of sealed segments from a blob file and opens them into the caller's buffer. The stream
 * codecs do the same in a cipher worker thread, fed from a file read stream: every batch then
 * crosses threads four times (threadpool to event loop, to the worker, back, to the socket), and
 * each crossing wakes a thread. Here the event loop only queues jobs and
 * pushes their plaintext to the socket, as a bare file server does with its reads.
 *
 * Exports:
 *   readOpen(fd, position, storedBytes, key, header, firstIndex, finalIndex, staging, out)
 *       -> Promise<number>: reads `storedBytes` bytes at `position` of `fd` into `staging`, which
 *          hold whole sealed segments (the last one may be short), the first being segment
 *          `firstIndex` of the stream whose 16-byte `header` is given (it is every segment's
 *          associated data and holds the segment size and nonce prefix); opens each with the
 *          32-byte `key` (segment `finalIndex` with the final flag) into `out`, and resolves with
 *          the plaintext bytes written. Rejects with code ERR_CIPHER_FORMAT when the file ends
 *          early or a segment does not authenticate (`out` is zeroed then: nothing
 *          unauthenticated is left to read), with a node:fs-like error when the read fails.
 * Each job has its own cipher context, so jobs of one stream may run on several pool threads at
 * once. The caller keeps the descriptor open and the buffers untouched until the promise settles.
 */
#define _GNU_SOURCE
#include "coffre.h"
#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

struct read_open_job {
  napi_async_work work;
  napi_deferred deferred;
  /* Keep the staging and output buffers (and so their memory) alive while the job runs. */
  napi_ref staging_ref, out_ref;
  int fd;
  int64_t position;
  size_t stored_bytes, out_length, opened;
  uint8_t key[KEY_BYTES], header[HEADER_BYTES];
  uint32_t first_index, final_index;
  uint8_t *staging, *out;
  /* An errno of the read, or a format failure (its message); neither when it worked. */
  int error;
  const char *format_error;
};

static void read_open(napi_env env, void *data) {
  (void)env;
  struct read_open_job *job = data;
  size_t done = 0;
  while (done < job->stored_bytes) {
    ssize_t n = pread(job->fd, job->staging + done, job->stored_bytes - done, job->position + (int64_t)done);
    if (n < 0) {
      if (errno == EINTR) continue;
      job->error = errno;
      return;
    }
    if (n == 0) {
      job->format_error = "stored stream is shorter than expected";
      return;
    }
    done += (size_t)n;
  }
  size_t sealed_size = ((size_t)1 << job->header[5]) + TAG_BYTES;
  EVP_CIPHER_CTX *ctx = gcm_context(job->key, 0);
  if (ctx == NULL) {
    job->format_error = "AES-256-GCM is not available";
    return;
  }
  uint8_t nonce[NONCE_BYTES];
  size_t at = 0, opened = 0;
  for (uint32_t index = job->first_index; at < job->stored_bytes; index++) {
    size_t length = job->stored_bytes - at < sealed_size ? job->stored_bytes - at : sealed_size;
    if (length < TAG_BYTES) {
      job->format_error = "segment is truncated";
      break;
    }
    size_t plain = length - TAG_BYTES;
    if (opened + plain > job->out_length) {
      job->format_error = "the output has no room for the plaintext";
      break;
    }
    segment_nonce(nonce, job->header, index, index == job->final_index);
    int n;
    const uint8_t *segment = job->staging + at;
    int ok = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, 0) == 1 && EVP_CipherUpdate(ctx, NULL, &n, job->header, HEADER_BYTES) == 1 &&
             EVP_CipherUpdate(ctx, job->out + opened, &n, segment, (int)plain) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, (void *)(segment + plain)) == 1 && EVP_CipherFinal_ex(ctx, job->out + opened + plain, &n) == 1;
    if (!ok) {
      job->format_error = "segment does not authenticate";
      break;
    }
    at += length;
    opened += plain;
  }
  EVP_CIPHER_CTX_free(ctx);
  /* Decrypted before it was authenticated, or beside what was not: none of it may be read. */
  if (job->format_error) memset(job->out, 0, job->out_length);
  job->opened = opened;
}

static void free_job(napi_env env, struct read_open_job *job) {
  if (job->staging_ref) napi_delete_reference(env, job->staging_ref);
  if (job->out_ref) napi_delete_reference(env, job->out_ref);
  if (job->work) napi_delete_async_work(env, job->work);
  OPENSSL_cleanse(job->key, KEY_BYTES);
  free(job);
}

static void complete(napi_env env, napi_status status, void *data) {
  struct read_open_job *job = data;
  napi_value result;
  if (status != napi_ok) {
    napi_reject_deferred(env, job->deferred, coded_error(env, "ECANCELED", "the read was cancelled"));
  } else if (job->error) {
    napi_reject_deferred(env, job->deferred, system_error(env, job->error, "read"));
  } else if (job->format_error) {
    napi_reject_deferred(env, job->deferred, coded_error(env, "ERR_CIPHER_FORMAT", job->format_error));
  } else {
    napi_create_double(env, (double)job->opened, &result);
    napi_resolve_deferred(env, job->deferred, result);
  }
  free_job(env, job);
}

/* The bytes of a Uint8Array argument of exactly `length` bytes (any length when 0). */
static int bytes_arg(napi_env env, napi_value value, uint8_t **data, size_t *length, size_t expected) {
  return uint8_array(env, value, data, length) && (expected == 0 || *length == expected);
}

static napi_value read_open_call(napi_env env, napi_callback_info info) {
  size_t argc = 9, key_length, header_length, staging_length;
  napi_value argv[9], promise, resource_name;
  uint8_t *key, *header;
  int32_t fd;
  double position, stored_bytes;
  struct read_open_job *job = calloc(1, sizeof *job);
  if (job == NULL) return fail(env, "out of memory");
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 9 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_value_double(env, argv[1], &position) != napi_ok || napi_get_value_double(env, argv[2], &stored_bytes) != napi_ok ||
      !bytes_arg(env, argv[3], &key, &key_length, KEY_BYTES) || !bytes_arg(env, argv[4], &header, &header_length, HEADER_BYTES) ||
      napi_get_value_uint32(env, argv[5], &job->first_index) != napi_ok || napi_get_value_uint32(env, argv[6], &job->final_index) != napi_ok ||
      !bytes_arg(env, argv[7], &job->staging, &staging_length, 0) || !bytes_arg(env, argv[8], &job->out, &job->out_length, 0)) {
    free(job);
    napi_throw_type_error(env, NULL, "readOpen(fd, position, storedBytes, 32-byte key, 16-byte header, firstIndex, finalIndex, staging, out)");
    return NULL;
  }
  if (fd < 0 || position < 0 || position > 9007199254740991.0 || stored_bytes < 0 || stored_bytes > (double)staging_length || stored_bytes > INT32_MAX ||
      header[5] < 10 || header[5] > 24) {
    free(job);
    napi_throw_range_error(env, NULL, "readOpen: descriptor, position, length or header out of range");
    return NULL;
  }
  job->fd = fd;
  job->position = (int64_t)position;
  job->stored_bytes = (size_t)stored_bytes;
  memcpy(job->key, key, KEY_BYTES);
  memcpy(job->header, header, HEADER_BYTES);
  if (napi_create_reference(env, argv[7], 1, &job->staging_ref) != napi_ok || napi_create_reference(env, argv[8], 1, &job->out_ref) != napi_ok ||
      napi_create_promise(env, &job->deferred, &promise) != napi_ok || napi_create_string_utf8(env, "coffre:readOpen", NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_create_async_work(env, NULL, resource_name, read_open, complete, job, &job->work) != napi_ok || napi_queue_async_work(env, job->work) != napi_ok) {
    free_job(env, job);
    return fail(env, "could not queue the read");
  }
  return promise;
}

int register_read_open(napi_env env, napi_value exports) {
  return export_function(env, exports, "readOpen", read_open_call);
}
