// httpx (jslib): a session over k6/http with a base URL, default headers,
// tags and params, as k6's documentation of javascript-api/jslib/httpx
// describes: get/post/put/patch/delete/head/options/trace take (url,
// [body], [params]); params given to a call win over the session's.
import http from 'k6/http';

export class Httpx {
  constructor(opts = {}) {
    this.baseURL = opts.baseURL || '';
    this.headers = Object.assign({}, opts.headers);
    this.tags = Object.assign({}, opts.tags);
    const params = Object.assign({}, opts);
    delete params.baseURL;
    delete params.headers;
    delete params.tags;
    this.params = params;
  }

  setBaseUrl(url) { this.baseURL = url; }
  addHeader(key, value) { this.headers[key] = value; }
  addHeaders(headers) { Object.assign(this.headers, headers); }
  clearHeader(name) { delete this.headers[name]; }
  addTag(key, value) { this.tags[key] = value; }
  addTags(tags) { Object.assign(this.tags, tags); }
  clearTag(name) { delete this.tags[name]; }

  _url(url) {
    url = String(url);
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : this.baseURL + url;
  }

  _params(params = {}) {
    return Object.assign({}, this.params, params, {
      headers: Object.assign({}, this.headers, params.headers),
      tags: Object.assign({}, this.tags, params.tags),
    });
  }

  request(method, url, body = null, params = {}) {
    return http.request(method, this._url(url), body, this._params(params));
  }
  asyncRequest(method, url, body = null, params = {}) {
    return http.asyncRequest(method, this._url(url), body, this._params(params));
  }
  get(url, body, params) { return this.request('GET', url, body, params); }
  post(url, body, params) { return this.request('POST', url, body, params); }
  put(url, body, params) { return this.request('PUT', url, body, params); }
  patch(url, body, params) { return this.request('PATCH', url, body, params); }
  delete(url, body, params) { return this.request('DELETE', url, body, params); }
  head(url, body, params) { return this.request('HEAD', url, body, params); }
  options(url, body, params) { return this.request('OPTIONS', url, body, params); }
  trace(url, body, params) { return this.request('TRACE', url, body, params); }

  // batch: each request as [method, url, body, params] or {method, url,
  // body, params}, through the session.
  batch(requests, extraParams = {}) {
    const reqs = requests.map((r) => {
      const [method, url, body, params] = Array.isArray(r) ? r : [r.method, r.url, r.body, r.params];
      return {
        method: method || 'GET',
        url: this._url(url),
        body: body === undefined ? null : body,
        params: this._params(Object.assign({}, extraParams, params)),
      };
    });
    return http.batch(reqs);
  }
}

// Request is a request description for batch().
export class Request {
  constructor(method, url, body, params) {
    Object.assign(this, { method, url, body, params });
  }
}
export class Get extends Request { constructor(url, body, params) { super('GET', url, body, params); } }
export class Post extends Request { constructor(url, body, params) { super('POST', url, body, params); } }
