/**
 * Uploads through the tus endpoint (/api/uploads/) with tus-js-client: a dropped network is retried
 * until it comes back, and the upload URL is kept in localStorage so that choosing the same file
 * again after a reload continues the upload where the server stopped receiving it.
 */
import { DetailedError, Upload, type HttpRequest, type HttpResponse, type PreviousUpload } from 'tus-js-client';
import { ApiError, authHeaders } from './api';

/** Small enough to pass reverse proxies' body limits, large enough that each request costs little. */
const CHUNK_SIZE = 16 * 1024 * 1024;

/**
 * Waits between tries of one stretch of the upload (reset whenever the server took more bytes):
 * about ten minutes in all, enough for a laptop to rejoin its Wi-Fi or a server to restart.
 */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000, 30000, 60000, 60000, 60000, 60000, 60000, 60000, 60000, 60000];

/** Uploads of this page, by upload URL: a second choice of a file being sent must not resume it a second time. */
const running = new Set<string>();

/** Our uploads' fingerprints; tus-js-client keeps each under `tus::<fingerprint>::<id>` in localStorage. */
const FINGERPRINT_PREFIX = 'coffre';

/**
 * Signing out forgets the unfinished uploads this browser offered to resume: their keys name the
 * files and folders, which are nobody else's business on a shared computer (their bytes stay on
 * the server until the upload expires).
 */
export function forgetUnfinishedUploads(): void {
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith(`tus::${FINGERPRINT_PREFIX}-`)) localStorage.removeItem(key);
  } catch {
    // No storage (a private window that refuses it): nothing was kept.
  }
}

export interface UploadCallbacks {
  onProgress: (loaded: number, total: number) => void;
  /** An upload an earlier page left unfinished goes on from `offset` bytes. */
  onResume?: (offset: number, total: number) => void;
  /** true while the upload waits for the network or the server to try again, false once it does. */
  onRetrying?: (waiting: boolean) => void;
}

export interface UploadHandle {
  promise: Promise<{ id: string | null }>;
  /** Cancels: the upload stops and the server forgets it and its bytes. */
  abort: () => void;
}

/**
 * Network failures, the server's own troubles (except a full quota, which waiting will not cure),
 * a wrong offset (a HEAD tells the right one) and a lock held by a PATCH cut short are retried.
 */
function retryable(error: DetailedError): boolean {
  const status = error.originalResponse?.getStatus() ?? 0;
  if (status === 0 || status === 408 || status === 409 || status === 423 || status === 429) return true;
  return status >= 500 && status !== 501 && status !== 505 && status !== 507;
}

/** The API's error envelope of a failed tus request as an ApiError, as the other calls report it. */
function apiErrorOf(error: Error): ApiError {
  if (!(error instanceof DetailedError)) return new ApiError(0, 'UPLOAD_FAILED', error.message || 'Upload failed');
  const res = error.originalResponse;
  // tus-js-client's own message names the request and its cause at length: a log's words, not the user's.
  if (!res) return new ApiError(0, 'NETWORK', 'Network error');
  let body: any = null;
  try {
    body = JSON.parse(res.getBody());
  } catch {
    // not JSON
  }
  return new ApiError(res.getStatus(), body?.code ?? `HTTP_${res.getStatus()}`, body?.message ?? 'Upload failed');
}

/** The newest upload this browser left unfinished for the same file and folder, unless this page is sending it. */
function newestPrevious(previous: PreviousUpload[]): PreviousUpload | undefined {
  return previous
    .filter((p) => p.uploadUrl && !running.has(p.uploadUrl))
    .sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))[0];
}

/** Uploads `file` into a folder (a name already there gets a new version). */
export function uploadFile(folderId: string, file: File, callbacks: UploadCallbacks): UploadHandle {
  let cancelled = false;
  let resuming = false;
  let waiting = false;
  let settle: { resolve: (v: { id: string | null }) => void; reject: (e: ApiError) => void };
  const promise = new Promise<{ id: string | null }>((resolve, reject) => (settle = { resolve, reject }));
  const setWaiting = (next: boolean) => {
    if (waiting === next) return;
    waiting = next;
    callbacks.onRetrying?.(next);
  };
  const done = () => {
    if (upload.url) running.delete(upload.url);
    removeEventListener('online', onOnline);
  };
  const upload = new Upload(file, {
    endpoint: new URL('/api/uploads/', location.href).href,
    chunkSize: CHUNK_SIZE,
    retryDelays: RETRY_DELAYS,
    // No type: the server takes application/octet-stream, as for a multipart part without one.
    metadata: { folderId, filename: file.name, onConflict: 'version', ...(file.type ? { filetype: file.type } : {}) },
    // The folder is part of the file's identity: the same file chosen for another folder is another upload.
    fingerprint: (f: File, options) =>
      Promise.resolve([FINGERPRINT_PREFIX, folderId, f.name, f.type, f.size, f.lastModified, options.endpoint].join('-')),
    storeFingerprintForResuming: true,
    // Finished: the same file chosen again is a new upload (a new version), not this one again.
    removeFingerprintOnSuccess: true,
    onBeforeRequest: (req: HttpRequest) => {
      // The token of the moment, in case the session was renewed while the upload waited.
      for (const [name, value] of Object.entries(authHeaders())) req.setHeader(name, value);
      setWaiting(false);
    },
    onUploadUrlAvailable: () => {
      if (upload.url) running.add(upload.url);
    },
    onAfterResponse: (req: HttpRequest, res: HttpResponse) => {
      if (!resuming || req.getMethod() !== 'HEAD') return;
      const status = res.getStatus();
      const offset = Number(res.getHeader('Upload-Offset'));
      if (status === 200 && Number.isFinite(offset)) callbacks.onResume?.(offset, file.size);
      // A lock or a server error is tried again (and said then); anything else ends the resume.
      if (status !== 423 && status < 500) resuming = false;
    },
    onProgress: (loaded, total) => callbacks.onProgress(loaded, total),
    // The default gives up at once while the browser says it is offline; here the delays run on.
    onShouldRetry: (error) => {
      const retry = retryable(error);
      if (retry) setWaiting(true);
      return retry;
    },
    onSuccess: ({ lastResponse }) => {
      done();
      settle.resolve({ id: lastResponse.getHeader('Coffre-File-Id') ?? null });
    },
    onError: (error) => {
      done();
      settle.reject(apiErrorOf(error));
    },
  });
  // Back online: the waiting try starts now rather than at the end of its delay.
  const onOnline = () => {
    if (!waiting || cancelled) return;
    void upload.abort(false).then(() => !cancelled && upload.start());
  };
  addEventListener('online', onOnline);

  upload
    .findPreviousUploads()
    .then(newestPrevious, () => undefined)
    .then((previous) => {
      if (cancelled) return;
      if (previous) {
        resuming = true;
        running.add(previous.uploadUrl!);
        upload.resumeFromPreviousUpload(previous);
      }
      upload.start();
    });

  const abort = () => {
    if (cancelled) return;
    cancelled = true;
    done();
    // Terminated on the server (DELETE): its bytes and the quota they held are freed.
    upload.abort(true).catch(() => {});
    settle.reject(new ApiError(0, 'ABORTED', 'Cancelled'));
  };
  return { promise, abort };
}
