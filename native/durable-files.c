/*
 * Durable files for the filesystem blob store (src/blobs/fs/durable-files.ts), each operation one
 * job on libuv's threadpool. Through node:fs every system call is a job of its own: a pool thread
 * woken for it, then the event loop woken for its answer. A small upload's blob took eight of
 * them (open, write, fsync, close and rename of the file, then open, fsync and close of its
 * directory), and waking a thread costs more than most of those calls.
 *
 * Exports:
 *   writeFileDurably(path, chunks[, renameTo]) -> Promise<void>: creates `path` (it must not
 *       exist, mode 0600), writes the Uint8Arrays of `chunks` in order, fsyncs and closes it, then
 *       renames it to `renameTo` when given (a rejection with syscall 'rename' leaves it whole
 *       under `path`)
 *   syncDirectory(path) -> Promise<void>: opens the directory, fsyncs it (its entries survive a
 *       crash), closes it
 * A failure rejects with an Error shaped like node:fs's (code, errno, syscall, path, dest); a file
 * left half-written is for the caller to remove.
 */
#define _GNU_SOURCE
#include "coffre.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>

struct file_job {
  napi_async_work work;
  napi_deferred deferred;
  /* Keeps the chunks (and so their memory) alive while the job runs. */
  napi_ref chunks_ref;
  char *path;
  char *rename_to;
  struct iovec *chunks;
  size_t count;
  int error;
  const char *syscall;
};

static void record(struct file_job *job, const char *syscall) {
  if (job->error) return;
  job->error = errno;
  job->syscall = syscall;
}

static void write_file(napi_env env, void *data) {
  (void)env;
  struct file_job *job = data;
  int fd = open(job->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return record(job, "open");
  size_t next = 0;
  for (;;) {
    while (next < job->count && job->chunks[next].iov_len == 0) next++;
    if (next == job->count) break;
    size_t batch = job->count - next < IOV_MAX ? job->count - next : IOV_MAX;
    ssize_t written = writev(fd, job->chunks + next, (int)batch);
    if (written < 0) {
      if (errno == EINTR) continue;
      record(job, "write");
      break;
    }
    /* A short write: the rest of the chunk it stopped in, then the next ones. */
    for (size_t left = (size_t)written; left > 0; next++) {
      if (left < job->chunks[next].iov_len) {
        job->chunks[next].iov_base = (char *)job->chunks[next].iov_base + left;
        job->chunks[next].iov_len -= left;
        break;
      }
      left -= job->chunks[next].iov_len;
    }
  }
  if (!job->error && fsync(fd) != 0) record(job, "fsync");
  if (close(fd) != 0) record(job, "close");
  if (!job->error && job->rename_to != NULL && rename(job->path, job->rename_to) != 0) record(job, "rename");
}

static void sync_directory(napi_env env, void *data) {
  (void)env;
  struct file_job *job = data;
  int fd = open(job->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return record(job, "open");
  if (fsync(fd) != 0) record(job, "fsync");
  if (close(fd) != 0) record(job, "close");
}

static void free_job(napi_env env, struct file_job *job) {
  if (job->chunks_ref) napi_delete_reference(env, job->chunks_ref);
  if (job->work) napi_delete_async_work(env, job->work);
  free(job->chunks);
  free(job->rename_to);
  free(job->path);
  free(job);
}

/* The rejection node:fs would give: "ENOENT: no such file or directory, open '<path>'". */
static napi_value fs_error(napi_env env, struct file_job *job) {
  const char *code = uv_err_name(-job->error);
  int renaming = strcmp(job->syscall, "rename") == 0;
  char message[2 * PATH_MAX + 256];
  snprintf(message, sizeof message, "%s: %s, %s '%s'%s%s%s", code, strerror(job->error), job->syscall, job->path, renaming ? " -> '" : "", renaming ? job->rename_to : "",
           renaming ? "'" : "");
  napi_value error, value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &value);
  napi_create_error(env, NULL, value, &error);
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, error, "code", value);
  napi_create_int32(env, -job->error, &value);
  napi_set_named_property(env, error, "errno", value);
  napi_create_string_utf8(env, job->syscall, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, error, "syscall", value);
  napi_create_string_utf8(env, job->path, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, error, "path", value);
  if (renaming) {
    napi_create_string_utf8(env, job->rename_to, NAPI_AUTO_LENGTH, &value);
    napi_set_named_property(env, error, "dest", value);
  }
  return error;
}

static void complete(napi_env env, napi_status status, void *data) {
  struct file_job *job = data;
  napi_value result;
  if (status == napi_ok && !job->error) {
    napi_get_undefined(env, &result);
    napi_resolve_deferred(env, job->deferred, result);
  } else {
    if (!job->error) {
      job->error = ECANCELED;
      job->syscall = "queue";
    }
    napi_reject_deferred(env, job->deferred, fs_error(env, job));
  }
  free_job(env, job);
}

/* A copy of a path argument; NULL (an exception pending) when it is not a non-empty string. */
static char *path_of(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok || length == 0 || length >= PATH_MAX) {
    napi_throw_type_error(env, NULL, "expected a path");
    return NULL;
  }
  char *path = malloc(length + 1);
  if (path == NULL) {
    fail(env, "out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, value, path, length + 1, &length);
  return path;
}

/* A new job for the path argument; NULL (an exception pending) when it is not one. */
static struct file_job *new_job(napi_env env, napi_value path) {
  struct file_job *job = calloc(1, sizeof *job);
  if (job == NULL) {
    fail(env, "out of memory");
    return NULL;
  }
  if ((job->path = path_of(env, path)) == NULL) {
    free(job);
    return NULL;
  }
  return job;
}

/* Queues `job` to run `execute`; returns its promise, or NULL (an exception pending, the job freed). */
static napi_value queue(napi_env env, struct file_job *job, const char *name, napi_async_execute_callback execute) {
  napi_value promise, resource_name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok || napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_create_async_work(env, NULL, resource_name, execute, complete, job, &job->work) != napi_ok || napi_queue_async_work(env, job->work) != napi_ok) {
    /* A deferred never settled is only garbage; the exception tells the caller. */
    free_job(env, job);
    return fail(env, "could not queue the file job");
  }
  return promise;
}

static napi_value write_file_durably(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_valuetype rename_type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "writeFileDurably(path, chunks): chunks must be an array of Uint8Arrays");
    return NULL;
  }
  struct file_job *job = new_job(env, argv[0]);
  if (job == NULL) return NULL;
  if (argc > 2 && napi_typeof(env, argv[2], &rename_type) == napi_ok && rename_type != napi_undefined && (job->rename_to = path_of(env, argv[2])) == NULL) {
    free_job(env, job);
    return NULL;
  }
  size_t total;
  if (!chunk_array(env, argv[1], &job->chunks, &job->count, &total)) {
    free_job(env, job);
    napi_throw_type_error(env, NULL, "writeFileDurably(path, chunks): chunks must be an array of Uint8Arrays");
    return NULL;
  }
  if (napi_create_reference(env, argv[1], 1, &job->chunks_ref) != napi_ok) {
    free_job(env, job);
    return fail(env, "out of memory");
  }
  return queue(env, job, "coffre:writeFileDurably", write_file);
}

static napi_value sync_directory_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "syncDirectory(path): expected a path");
    return NULL;
  }
  struct file_job *job = new_job(env, argv[0]);
  if (job == NULL) return NULL;
  return queue(env, job, "coffre:syncDirectory", sync_directory);
}

int register_durable_files(napi_env env, napi_value exports) {
  return export_function(env, exports, "writeFileDurably", write_file_durably) && export_function(env, exports, "syncDirectory", sync_directory_call);
}
