// k6 docs, javascript-api/k6-encoding: base64 in the std and url alphabets;
// b64decode(s, enc, 's') returns a string.
// expect: exit 0
// expect: check "b64encode std" 1 0
// expect: check "b64decode to string" 1 0
// expect: check "rawurl alphabet" 1 0
import encoding from 'k6/encoding';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(encoding, {
    'b64encode std': (e) => e.b64encode('hello') === 'aGVsbG8=',
    'b64decode to string': (e) => e.b64decode('aGVsbG8=', 'std', 's') === 'hello',
    'rawurl alphabet': (e) => e.b64encode('hello?>', 'rawurl') === 'aGVsbG8_Pg',
  });
}
