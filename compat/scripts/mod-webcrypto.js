// k6 docs, javascript-api/crypto: the WebCrypto global crypto has
// randomUUID() and getRandomValues().
// expect: exit 0
// expect: check "randomUUID" 1 0
// expect: check "getRandomValues" 1 0
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    randomUUID: () => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
    getRandomValues: () => crypto.getRandomValues(new Uint8Array(16)).length === 16,
  });
}
