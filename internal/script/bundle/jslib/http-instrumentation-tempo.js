// http-instrumentation-tempo (jslib): every request carries a trace
// context, as k6's documentation describes: instrumentHTTP(options)
// replaces the k6/http functions with ones that add it; Client(options)
// is an instrumented http of its own. Options: propagator "w3c" (a
// traceparent header, 00-<trace id>-<span id>-<flags>) or "jaeger" (an
// uber-trace-id header, <trace id>:<span id>:0:<flags>); sampling, the
// share of requests marked sampled (1: all).
import http from 'k6/http';

function validate(opts) {
  const o = Object.assign({ propagator: 'w3c', sampling: 1 }, opts);
  if (o.propagator !== 'w3c' && o.propagator !== 'jaeger') {
    throw new Error(`http-instrumentation-tempo: unknown propagator "${o.propagator}" (w3c or jaeger)`);
  }
  if (typeof o.sampling !== 'number' || o.sampling < 0 || o.sampling > 1) {
    throw new Error('http-instrumentation-tempo: sampling must be a number between 0 and 1');
  }
  return o;
}

function traceHeaders(o) {
  const sampled = Math.random() < o.sampling;
  const traceID = randomHex(16);
  const spanID = randomHex(8);
  if (o.propagator === 'jaeger') {
    return { 'uber-trace-id': `${traceID}:${spanID}:0:${sampled ? '1' : '0'}` };
  }
  return { traceparent: `00-${traceID}-${spanID}-${sampled ? '01' : '00'}` };
}

// uninstrumented are k6/http's functions as the module was loaded: a
// Client adds its headers only, whatever instrumentHTTP did since.
const uninstrumented = Object.assign({}, http);

export class Client {
  constructor(opts) {
    this.configure(opts);
  }
  configure(opts) {
    // not this.options: that is the instrumented OPTIONS request.
    const o = validate(opts);
    instrument(this, uninstrumented, () => traceHeaders(o));
  }
}

export function instrumentHTTP(opts) {
  const o = validate(opts);
  instrument(http, Object.assign({}, http), () => traceHeaders(o));
}

export default { Client, instrumentHTTP };
