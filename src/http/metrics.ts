import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus metrics of one app instance. Each `buildApp` has its own registry (tests build
 * many apps in one process, and each must count only its own requests); the process metrics
 * (CPU, memory, event loop, GC) belong to the process, so they live in one shared registry that
 * every instance appends to its exposition.
 */
export interface Metrics {
  /** One finished HTTP request: `route` is the route pattern, never the raw URL (bounded label values). */
  recordRequest(method: string, route: string, status: number, seconds: number): void;
  /** Plaintext bytes of an upload that was stored. */
  recordUploadedBytes(bytes: number): void;
  /** Content bytes of a download whose response was sent completely. */
  recordDownloadedBytes(bytes: number): void;
  uploadStarted(): void;
  uploadEnded(): void;
  /** The Prometheus text exposition of this instance and of the process. */
  exposition(): Promise<{ contentType: string; body: string }>;
}

// From a quick JSON read to a multi-gigabyte streamed upload.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

let processRegistry: Registry | undefined;

/** Default metrics are collected once per process: collecting them again per app would add observers each time. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'coffre_' });
  }
  return processRegistry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: 'coffre_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'coffre_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const uploaded = new Counter({ name: 'coffre_uploaded_bytes_total', help: 'Plaintext bytes of stored uploads', registers });
  const downloaded = new Counter({ name: 'coffre_downloaded_bytes_total', help: 'Content bytes of downloads sent completely', registers });
  const activeUploads = new Gauge({ name: 'coffre_active_uploads', help: 'Upload requests in progress', registers });
  const shared = processMetrics();

  return {
    recordRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
    recordUploadedBytes: (bytes) => uploaded.inc(bytes),
    recordDownloadedBytes: (bytes) => downloaded.inc(bytes),
    uploadStarted: () => activeUploads.inc(),
    uploadEnded: () => activeUploads.dec(),
    async exposition() {
      const [own, process] = await Promise.all([registry.metrics(), shared.metrics()]);
      return { contentType: registry.contentType, body: `${own}\n${process}` };
    },
  };
}

/** Counts every response of the app, by route pattern; requests no route matched share one label value. */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.recordRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
}
