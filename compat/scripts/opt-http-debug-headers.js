// k6 docs, using-k6/http-debugging: --http-debug (no value) logs the
// requests and responses without their bodies.
// args: --http-debug
// expect: exit 0
// expect: stderr contains "POST /echo HTTP/1.1"
// expect: stderr lacks "secret-body"
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.post(`${__ENV.BASE_URL}/echo`, 'secret-body');
}
