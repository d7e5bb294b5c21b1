// instrument: the http functions of the two instrumentation libraries,
// each adding the headers that headersFor(method, body, params) gives to
// the request's own. jslib.go puts this file's declarations at the top of
// each library's module.

// instrument sets on target an instrumented version of each request
// function of base (a k6/http module object or a copy of one).
function instrument(target, base, headersFor) {
  const send = (method, url, body, params) => {
    params = Object.assign({}, params);
    const withURL = Object.assign({ __url: String(url) }, params);
    params.headers = Object.assign({}, params.headers, headersFor(method, body, withURL));
    return [method, url, body, params];
  };
  target.request = (method, url, body, params) => base.request(...send(method, url, body, params));
  target.asyncRequest = (method, url, body, params) => base.asyncRequest(...send(method, url, body, params));
  for (const m of ['get', 'head']) {
    target[m] = (url, params) => base.request(...send(m.toUpperCase(), url, null, params));
  }
  for (const m of ['post', 'put', 'patch', 'options', 'del']) {
    const method = m === 'del' ? 'DELETE' : m.toUpperCase();
    target[m] = (url, body, params) => base.request(...send(method, url, body, params));
  }
}

// randomHex is n random bytes as lower-case hex.
function randomHex(n) {
  const bytes = new Uint8Array(n);
  if (globalThis.crypto && globalThis.crypto.getRandomValues) {
    globalThis.crypto.getRandomValues(bytes);
  } else {
    for (let i = 0; i < n; i++) bytes[i] = Math.floor(Math.random() * 256);
  }
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
