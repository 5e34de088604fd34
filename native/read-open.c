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
 *   readWhole(path, plainSize, key, staging, out) -> Promise<number>: a small blob file read whole
 *          as one job (the many small entries of a zip archive, src/content/native-engine.ts):
 *          opens `path`, reads all of it into `staging`, checks its header (format.ts's
 *          parseHeader) and that its length is that of `plainSize` bytes sealed, opens every
 *          segment into `out` and closes the file. Apart, these steps were five trips through the
 *          threadpool (open, header, length, segments, close), each waking a pool thread and then
 *          the event loop. Rejects as readOpen does (a missing file: code ENOENT).
 *   openWhole(stored, plainSize, key, out) -> number: the same opening of a whole stored stream
 *          already in memory (a blob kept in the database), on the calling thread, with no cipher
 *          context left behind for the collector (one per small blob piled up in native memory).
 *          Throws with code ERR_CIPHER_FORMAT as readWhole rejects.
 * Each job has its own cipher context, so jobs of one stream may run on several pool threads at
 * once. The caller keeps the descriptor open and the buffers untouched until the promise settles.
 */
#define _GNU_SOURCE
#include "coffre.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

struct read_open_job {
  napi_async_work work;
  napi_deferred deferred;
  /* Keep the staging and output buffers (and so their memory) alive while the job runs. */
  napi_ref staging_ref, out_ref;
  int fd;
  /* readWhole's file, and the plaintext length it must hold. */
  char *path;
  size_t plain_size;
  int64_t position;
  size_t stored_bytes, out_length, opened;
  uint8_t key[KEY_BYTES], header[HEADER_BYTES];
  uint32_t first_index, final_index;
  uint8_t *staging, *out;
  /* An errno and the call that set it, or a format failure (its message); neither when it worked. */
  int error;
  const char *syscall;
  const char *format_error;
};

/* Reads `bytes` bytes at `position` of `fd` into `into`; fewer only where the file ends. -1 when the read fails (job->error set). */
static ssize_t read_at(struct read_open_job *job, int fd, uint8_t *into, size_t bytes, int64_t position) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pread(fd, into + done, bytes - done, position + (int64_t)done);
    if (n < 0) {
      if (errno == EINTR) continue;
      job->error = errno;
      job->syscall = "read";
      return -1;
    }
    if (n == 0) break;
    done += (size_t)n;
  }
  return (ssize_t)done;
}

/*
 * Opens the sealed segments in `sealed` (`sealed_bytes` of whole segments, the last one may be
 * short), the first being segment `first_index`, into job->out; sets job->opened, or
 * job->format_error (and zeroes the output: nothing unauthenticated is left to read).
 */
static void open_segments(struct read_open_job *job, const uint8_t *sealed, size_t sealed_bytes, uint32_t first_index) {
  size_t sealed_size = ((size_t)1 << job->header[5]) + TAG_BYTES;
  EVP_CIPHER_CTX *ctx = gcm_context(job->key, 0);
  if (ctx == NULL) {
    job->format_error = "AES-256-GCM is not available";
    return;
  }
  uint8_t nonce[NONCE_BYTES];
  size_t at = 0, opened = 0;
  for (uint32_t index = first_index; at < sealed_bytes; index++) {
    size_t length = sealed_bytes - at < sealed_size ? sealed_bytes - at : sealed_size;
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
    const uint8_t *segment = sealed + at;
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

static void read_open(napi_env env, void *data) {
  (void)env;
  struct read_open_job *job = data;
  ssize_t got = read_at(job, job->fd, job->staging, job->stored_bytes, job->position);
  if (got < 0) return;
  if ((size_t)got < job->stored_bytes) {
    job->format_error = "stored stream is shorter than expected";
    return;
  }
  open_segments(job, job->staging, job->stored_bytes, job->first_index);
}

/* The header checks of format.ts's parseHeader: magic, version 1, segment size 2^10 to 2^24, reserved bytes 0. */
static int valid_header(const uint8_t *header) {
  return memcmp(header, "CFRS", 4) == 0 && header[4] == 1 && header[5] >= 10 && header[5] <= 24 && header[6] == 0 && header[7] == 0 && header[8] == 0;
}

/* Opens a whole stored stream of job->plain_size plaintext bytes, `stored` bytes of it in job->staging: header, length, every segment. */
static void open_whole(struct read_open_job *job, size_t stored) {
  if (stored < HEADER_BYTES || !valid_header(job->staging)) {
    job->format_error = "invalid header";
    return;
  }
  memcpy(job->header, job->staging, HEADER_BYTES);
  size_t segment_size = (size_t)1 << job->header[5];
  size_t segments = job->plain_size == 0 ? 1 : (job->plain_size + segment_size - 1) / segment_size;
  if (stored != HEADER_BYTES + job->plain_size + segments * TAG_BYTES) {
    job->format_error = "stored stream is shorter or longer than expected";
    return;
  }
  job->final_index = (uint32_t)(segments - 1);
  open_segments(job, job->staging + HEADER_BYTES, stored - HEADER_BYTES, 0);
}

static void read_whole(napi_env env, void *data) {
  (void)env;
  struct read_open_job *job = data;
  int fd = open(job->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    job->error = errno;
    job->syscall = "open";
    return;
  }
  struct stat info;
  ssize_t got = -1;
  if (fstat(fd, &info) != 0) {
    job->error = errno;
    job->syscall = "fstat";
  } else if ((uint64_t)info.st_size > job->stored_bytes) {
    job->format_error = "stored stream is longer than expected";
  } else {
    got = read_at(job, fd, job->staging, (size_t)info.st_size, 0);
  }
  close(fd);
  if (got >= 0) open_whole(job, (size_t)got);
}

static void free_job(napi_env env, struct read_open_job *job) {
  if (job->staging_ref) napi_delete_reference(env, job->staging_ref);
  if (job->out_ref) napi_delete_reference(env, job->out_ref);
  if (job->work) napi_delete_async_work(env, job->work);
  OPENSSL_cleanse(job->key, KEY_BYTES);
  free(job->path);
  free(job);
}

static void complete(napi_env env, napi_status status, void *data) {
  struct read_open_job *job = data;
  napi_value result;
  if (status != napi_ok) {
    napi_reject_deferred(env, job->deferred, coded_error(env, "ECANCELED", "the read was cancelled"));
  } else if (job->error) {
    napi_reject_deferred(env, job->deferred, system_error(env, job->error, job->syscall));
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

/* Queues a job whose fields are set, keeping its staging and output buffers alive until it settles; its promise. */
static napi_value queue_job(napi_env env, struct read_open_job *job, napi_value staging, napi_value out, const char *name, napi_async_execute_callback execute) {
  napi_value promise, resource_name;
  if (napi_create_reference(env, staging, 1, &job->staging_ref) != napi_ok || napi_create_reference(env, out, 1, &job->out_ref) != napi_ok ||
      napi_create_promise(env, &job->deferred, &promise) != napi_ok || napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_create_async_work(env, NULL, resource_name, execute, complete, job, &job->work) != napi_ok || napi_queue_async_work(env, job->work) != napi_ok) {
    free_job(env, job);
    return fail(env, "could not queue the read");
  }
  return promise;
}

static napi_value read_open_call(napi_env env, napi_callback_info info) {
  size_t argc = 9, key_length, header_length, staging_length;
  napi_value argv[9];
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
  return queue_job(env, job, argv[7], argv[8], "coffre:readOpen", read_open);
}

static napi_value read_whole_call(napi_env env, napi_callback_info info) {
  size_t argc = 5, key_length, path_length;
  napi_value argv[5];
  uint8_t *key;
  double plain_size;
  struct read_open_job *job = calloc(1, sizeof *job);
  if (job == NULL) return fail(env, "out of memory");
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 ||
      napi_get_value_string_utf8(env, argv[0], NULL, 0, &path_length) != napi_ok || napi_get_value_double(env, argv[1], &plain_size) != napi_ok ||
      !bytes_arg(env, argv[2], &key, &key_length, KEY_BYTES) || !bytes_arg(env, argv[3], &job->staging, &job->stored_bytes, 0) ||
      !bytes_arg(env, argv[4], &job->out, &job->out_length, 0)) {
    free(job);
    napi_throw_type_error(env, NULL, "readWhole(path, plainSize, 32-byte key, staging, out)");
    return NULL;
  }
  if (plain_size < 0 || plain_size > (double)job->out_length || job->stored_bytes > INT32_MAX || (job->path = malloc(path_length + 1)) == NULL) {
    free(job);
    napi_throw_range_error(env, NULL, "readWhole: the plaintext size is out of range or the output too small");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], job->path, path_length + 1, &path_length);
  job->plain_size = (size_t)plain_size;
  job->fd = -1;
  memcpy(job->key, key, KEY_BYTES);
  return queue_job(env, job, argv[3], argv[4], "coffre:readWhole", read_whole);
}

/* openWhole(stored, plainSize, key, out): readWhole's opening of bytes already in memory, on the calling thread. */
static napi_value open_whole_call(napi_env env, napi_callback_info info) {
  size_t argc = 4, key_length;
  napi_value argv[4], result;
  uint8_t *key;
  double plain_size;
  struct read_open_job job = {0};
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !bytes_arg(env, argv[0], &job.staging, &job.stored_bytes, 0) ||
      napi_get_value_double(env, argv[1], &plain_size) != napi_ok || !bytes_arg(env, argv[2], &key, &key_length, KEY_BYTES) ||
      !bytes_arg(env, argv[3], &job.out, &job.out_length, 0)) {
    napi_throw_type_error(env, NULL, "openWhole(stored, plainSize, 32-byte key, out)");
    return NULL;
  }
  if (plain_size < 0 || plain_size > (double)job.out_length || job.stored_bytes > INT32_MAX) {
    napi_throw_range_error(env, NULL, "openWhole: the plaintext size is out of range or the output too small");
    return NULL;
  }
  job.plain_size = (size_t)plain_size;
  memcpy(job.key, key, KEY_BYTES);
  open_whole(&job, job.stored_bytes);
  OPENSSL_cleanse(job.key, KEY_BYTES);
  if (job.format_error) {
    napi_throw(env, coded_error(env, "ERR_CIPHER_FORMAT", job.format_error));
    return NULL;
  }
  napi_create_double(env, (double)job.opened, &result);
  return result;
}

int register_read_open(napi_env env, napi_value exports) {
  return export_function(env, exports, "readOpen", read_open_call) && export_function(env, exports, "readWhole", read_whole_call) &&
         export_function(env, exports, "openWhole", open_whole_call);
}
