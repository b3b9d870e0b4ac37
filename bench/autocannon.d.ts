// The part of autocannon's API that run.ts uses (the package ships no types; this avoids a second dev dependency).
declare module 'autocannon' {
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Request extends RawRequest {
    setupRequest?: (request: RawRequest, context: object) => RawRequest;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: Request[];
    /** Called with each connection's client; its 'headers' event carries a response's raw headers. */
    setupClient?: (client: Client) => void;
  }
  interface Client {
    on(event: 'headers', listener: (response: { headers: string[] }) => void): void;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    max: number;
    total: number;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
