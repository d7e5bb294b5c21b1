// k6 docs, javascript-api/k6-crypto: hashes and HMAC with hex or base64
// output.
// expect: exit 0
// expect: check "sha256 hex" 1 0
// expect: check "sha256 base64" 1 0
// expect: check "md5 hex" 1 0
// expect: check "hmac sha256" 1 0
import crypto from 'k6/crypto';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(crypto, {
    'sha256 hex': (c) => c.sha256('hello', 'hex') === '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    'sha256 base64': (c) => c.sha256('hello', 'base64') === 'LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=',
    'md5 hex': (c) => c.md5('hello', 'hex') === '5d41402abc4b2a76b9719d911017c592',
    'hmac sha256': (c) =>
      c.hmac('sha256', 'secret', 'message', 'hex') === '8b5f48702995c1598c573db1e21866a9b825d4a794d169d7060a03605796360b',
  });
}
