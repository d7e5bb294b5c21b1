// http-instrumentation-pyroscope (jslib): every request carries a baggage
// header for Grafana's profiling, as k6's documentation describes: by
// default k6.scenario (the scenario's name), k6.name (the request's name
// tag, else its URL) and k6.test_run_id (K6_CLOUDRUN_TEST_RUN_ID).
// instrumentHTTP(generateHeaders) replaces the k6/http functions;
// Client(generateHeaders) is an instrumented http of its own.
import http from 'k6/http';
import exec from 'k6/execution';

function baggage(method, body, params) {
  const name = params && params.tags && params.tags.name;
  const pairs = [
    ['k6.scenario', exec.scenario.name],
    ['k6.name', name || (params && params.__url) || ''],
    ['k6.test_run_id', __ENV.K6_CLOUDRUN_TEST_RUN_ID || ''],
  ];
  return { baggage: pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join(', ') };
}

// uninstrumented are k6/http's functions as the module was loaded: a
// Client adds its headers only, whatever instrumentHTTP did since.
const uninstrumented = Object.assign({}, http);

export class Client {
  constructor(generateHeaders = baggage) {
    instrument(this, uninstrumented, generateHeaders);
  }
}

export function instrumentHTTP(generateHeaders = baggage) {
  instrument(http, Object.assign({}, http), generateHeaders);
}

export default { Client, instrumentHTTP };
