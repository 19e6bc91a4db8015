// The part of autocannon's API that load/ uses (the package ships no types).
declare module 'autocannon' {
  export interface Options {
    url: string
    method?: string
    headers?: Record<string, string>
    body?: Buffer | string
    connections?: number
    duration?: number
    timeout?: number
    /** setupRequest may change each request (its path), before it is sent. */
    requests?: Array<{ setupRequest?: (request: AutocannonRequest) => AutocannonRequest }>
  }
  export interface AutocannonRequest { method?: string, path?: string, headers?: Record<string, string>, body?: Buffer | string }
  export interface Histogram { average: number, mean: number, p50: number, p90: number, p99: number, max: number, min: number }
  export interface Result {
    latency: Histogram
    requests: Histogram & { total: number }
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    statusCodeStats: Record<string, { count: number }>
  }
  export interface Instance extends PromiseLike<Result> {
    on (event: 'tick', listener: (counter: { counter: number }) => void): this
    stop (): void
  }
  function autocannon (options: Options): Instance
  export default autocannon
}
