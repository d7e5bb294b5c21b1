// k6 docs, using-k6/environment-variables: -e KEY=VALUE is read as
// __ENV.KEY.
// args: -e GREETING=bonjour
// expect: exit 0
// expect: check "greeting from -e" 1 0
// expect: check "base url from -e" 1 0
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(__ENV, {
    'greeting from -e': (e) => e.GREETING === 'bonjour',
    'base url from -e': (e) => e.BASE_URL.startsWith('http://127.0.0.1:'),
  });
}
