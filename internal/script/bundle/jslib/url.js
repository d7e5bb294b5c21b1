// url (jslib): URL and URLSearchParams with the WHATWG URL standard's
// semantics for the URLs load tests use (http, https, ws, wss, ftp, file):
// parsing against a base, lower-cased scheme and host, default ports
// dropped, dot segments removed, percent-encoding of path, query and
// fragment, and a searchParams object live with the URL's query.

const defaultPorts = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21', 'file:': '' };

function formEncode(s) {
  return encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, '+');
}

function formDecode(s) {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch (e) {
    // a stray % stays as written, as the standard's decoder leaves it.
    return plus.replace(/%([0-9a-fA-F]{2})/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
  }
}

function encodeSet(s, re) {
  return s.replace(re, (c) => encodeURIComponent(c));
}
const pathSet = /[^\x21-\x7e]|["#<>?`{}]/gu;
const querySet = /[^\x21-\x7e]|["#<>']/gu;
const fragmentSet = /[^\x21-\x7e]|["<>`]/gu;
const userinfoSet = /[^\x21-\x7e]|["#<>?`{}/:;=@[\\\]^|]/gu;

export class URLSearchParams {
  constructor(init) {
    this._list = [];
    this._url = null;
    if (init === undefined || init === null) return;
    if (init instanceof URLSearchParams) {
      this._list = init._list.map(([k, v]) => [k, v]);
    } else if (typeof init === 'object' && typeof init[Symbol.iterator] === 'function') {
      for (const pair of init) {
        const p = Array.from(pair);
        if (p.length !== 2) throw new TypeError("Failed to construct 'URLSearchParams': each pair must have exactly two items");
        this._list.push([String(p[0]), String(p[1])]);
      }
    } else if (typeof init === 'object') {
      for (const k of Object.keys(init)) this._list.push([k, String(init[k])]);
    } else {
      this._parse(String(init));
    }
  }

  _parse(s) {
    this._list = [];
    if (s.startsWith('?')) s = s.slice(1);
    for (const part of s.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const k = eq === -1 ? part : part.slice(0, eq);
      const v = eq === -1 ? '' : part.slice(eq + 1);
      this._list.push([formDecode(k), formDecode(v)]);
    }
  }

  _changed() {
    if (this._url) this._url._query = this._list.length ? this.toString() : null;
  }

  get size() { return this._list.length; }
  append(name, value) { this._list.push([String(name), String(value)]); this._changed(); }
  delete(name, value) {
    name = String(name);
    this._list = this._list.filter(([k, v]) => !(k === name && (value === undefined || v === String(value))));
    this._changed();
  }
  get(name) {
    const e = this._list.find(([k]) => k === String(name));
    return e ? e[1] : null;
  }
  getAll(name) { return this._list.filter(([k]) => k === String(name)).map(([, v]) => v); }
  has(name, value) {
    return this._list.some(([k, v]) => k === String(name) && (value === undefined || v === String(value)));
  }
  set(name, value) {
    name = String(name);
    const i = this._list.findIndex(([k]) => k === name);
    if (i === -1) {
      this._list.push([name, String(value)]);
    } else {
      this._list[i][1] = String(value);
      this._list = this._list.filter(([k], j) => j <= i || k !== name);
    }
    this._changed();
  }
  sort() {
    // stable, by UTF-16 code units, as the standard asks.
    this._list = this._list.map((e, i) => [e, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map(([e]) => e);
    this._changed();
  }
  forEach(fn, thisArg) { for (const [k, v] of this._list) fn.call(thisArg, v, k, this); }
  *entries() { for (const [k, v] of this._list) yield [k, v]; }
  *keys() { for (const [k] of this._list) yield k; }
  *values() { for (const [, v] of this._list) yield v; }
  [Symbol.iterator]() { return this.entries(); }
  toString() { return this._list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&'); }
}

// removeDots resolves "." and ".." segments of a path.
function removeDots(path) {
  const out = [];
  const segs = path.split('/');
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    const last = i === segs.length - 1;
    if (s === '.' || s.toLowerCase() === '%2e') {
      if (last) out.push('');
    } else if (s === '..' || /^(\.|%2e){2}$/i.test(s)) {
      if (out.length > 1) out.pop();
      if (last) out.push('');
    } else {
      out.push(s);
    }
  }
  return out.join('/');
}

const absolute = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s;
const authority = /^\/\/([^/?#]*)(.*)$/s;

export class URL {
  constructor(url, base) {
    url = String(url).replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '').replace(/[\t\n\r]/g, '');
    const m = absolute.exec(url);
    if (m) {
      this._set(m[1].toLowerCase() + ':', m[2], url);
      return;
    }
    if (base === undefined) throw new TypeError(`Invalid URL: ${url}`);
    const b = base instanceof URL ? base : new URL(base);
    this._resolve(b, url);
  }

  _set(protocol, rest, whole) {
    this._protocol = protocol;
    const special = protocol in defaultPorts;
    if (special) rest = rest.replace(/\\/g, '/');
    const a = authority.exec(rest);
    if (special && !a) {
      // "http:example.com" and "http:/example.com" name a host too.
      return this._set(protocol, '//' + rest.replace(/^\/*/, ''), whole);
    }
    this._username = '';
    this._password = '';
    this._hostname = '';
    this._port = '';
    this._hasAuthority = !!a;
    if (a) {
      this._authority(a[1], whole);
      rest = a[2];
    }
    this._pathQueryHash(rest);
  }

  _authority(auth, whole) {
    const at = auth.lastIndexOf('@');
    if (at !== -1) {
      const info = auth.slice(0, at);
      auth = auth.slice(at + 1);
      const colon = info.indexOf(':');
      this._username = encodeSet(colon === -1 ? info : info.slice(0, colon), userinfoSet);
      this._password = colon === -1 ? '' : encodeSet(info.slice(colon + 1), userinfoSet);
    }
    const hp = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(auth);
    if (!hp) throw new TypeError(`Invalid URL: ${whole}`);
    let host = hp[1];
    try {
      host = decodeURIComponent(host);
    } catch (e) {
      throw new TypeError(`Invalid URL: ${whole}`);
    }
    host = host.toLowerCase();
    if (/[\x00-\x20#%/:<>?@[\\\]^|]/.test(host.replace(/^\[.*\]$/, 'v6'))) throw new TypeError(`Invalid URL: ${whole}`);
    if (this._protocol in defaultPorts && this._protocol !== 'file:' && host === '') throw new TypeError(`Invalid URL: ${whole}`);
    this._hostname = host;
    const port = hp[2] === undefined ? '' : hp[2];
    if (port !== '') {
      if (!/^\d+$/.test(port) || Number(port) > 65535) throw new TypeError(`Invalid URL: ${whole}`);
      const p = String(Number(port));
      this._port = p === defaultPorts[this._protocol] ? '' : p;
    }
  }

  _pathQueryHash(rest) {
    let hash = null;
    const h = rest.indexOf('#');
    if (h !== -1) {
      hash = rest.slice(h + 1);
      rest = rest.slice(0, h);
    }
    let query = null;
    const q = rest.indexOf('?');
    if (q !== -1) {
      query = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
    this._setPath(rest);
    this._query = query === null ? null : encodeSet(query, querySet);
    this._fragment = hash === null ? null : encodeSet(hash, fragmentSet);
    this._params = new URLSearchParams(this._query || '');
    this._params._url = this;
  }

  _setPath(path) {
    const special = this._protocol in defaultPorts;
    if (special || this._hasAuthority || path.startsWith('/')) {
      if (special && path === '') path = '/';
      if (path !== '' && !path.startsWith('/')) path = '/' + path;
      path = removeDots(path);
    }
    this._path = encodeSet(path, pathSet);
  }

  _resolve(b, ref) {
    if (b._protocol in defaultPorts) ref = ref.replace(/\\/g, '/');
    this._protocol = b._protocol;
    if (ref.startsWith('//')) {
      this._set(b._protocol, ref, ref);
      return;
    }
    this._username = b._username;
    this._password = b._password;
    this._hostname = b._hostname;
    this._port = b._port;
    this._hasAuthority = b._hasAuthority;
    if (ref === '') {
      this._path = b._path;
      this._query = b._query;
      this._fragment = null;
    } else if (ref.startsWith('#')) {
      this._path = b._path;
      this._query = b._query;
      this._fragment = encodeSet(ref.slice(1), fragmentSet);
    } else if (ref.startsWith('?')) {
      this._path = b._path;
      this._pathQueryHash(ref);
      this._path = b._path;
      return;
    } else if (ref.startsWith('/')) {
      this._pathQueryHash(ref);
      return;
    } else {
      const dir = b._path.slice(0, b._path.lastIndexOf('/') + 1);
      this._pathQueryHash((dir || '/') + ref);
      return;
    }
    this._params = new URLSearchParams(this._query || '');
    this._params._url = this;
  }

  get protocol() { return this._protocol; }
  set protocol(v) {
    const p = String(v).replace(/:.*$/, '').toLowerCase() + ':';
    if (/^[a-z][a-z0-9+.-]*:$/.test(p)) this._protocol = p;
    if (this._port === defaultPorts[this._protocol]) this._port = '';
  }
  get username() { return this._username; }
  set username(v) { this._username = encodeSet(String(v), userinfoSet); }
  get password() { return this._password; }
  set password(v) { this._password = encodeSet(String(v), userinfoSet); }
  get hostname() { return this._hostname; }
  set hostname(v) { this._hostname = String(v).toLowerCase(); }
  get port() { return this._port; }
  set port(v) {
    const s = String(v);
    if (s === '') {
      this._port = '';
      return;
    }
    const d = /^\d+/.exec(s);
    if (d && Number(d[0]) <= 65535) this._port = String(Number(d[0])) === defaultPorts[this._protocol] ? '' : String(Number(d[0]));
  }
  get host() { return this._hostname + (this._port ? ':' + this._port : ''); }
  set host(v) {
    const [h, p] = String(v).split(':');
    this.hostname = h;
    if (p !== undefined) this.port = p;
  }
  get origin() {
    if (this._protocol in defaultPorts && this._protocol !== 'file:') return this._protocol + '//' + this.host;
    return 'null';
  }
  get pathname() { return this._path; }
  set pathname(v) { this._setPath(String(v)); }
  get search() { return this._query ? '?' + this._query : ''; }
  set search(v) {
    const s = String(v).replace(/^\?/, '');
    this._query = s === '' ? null : encodeSet(s, querySet);
    this._params._parse(s);
  }
  get searchParams() { return this._params; }
  get hash() { return this._fragment ? '#' + this._fragment : ''; }
  set hash(v) {
    const s = String(v).replace(/^#/, '');
    this._fragment = s === '' ? null : encodeSet(s, fragmentSet);
  }
  get href() {
    let s = this._protocol;
    if (this._hasAuthority) {
      s += '//';
      if (this._username || this._password) s += this._username + (this._password ? ':' + this._password : '') + '@';
      s += this.host;
    }
    s += this._path;
    if (this._query !== null) s += '?' + this._query;
    if (this._fragment !== null) s += '#' + this._fragment;
    return s;
  }
  set href(v) {
    const u = new URL(v);
    Object.assign(this, u);
    this._params._url = this;
  }
  toString() { return this.href; }
  toJSON() { return this.href; }
}
