// k6 docs, using-k6/http-debugging: --http-debug=full logs each request
// and its response, bodies included, on stderr; stdout keeps the summary.
// args: --http-debug=full
// expect: exit 0
// expect: stderr contains "Request:"
// expect: stderr contains "POST /echo?debug=1 HTTP/1.1"
// expect: stderr contains "debug-body"
// expect: stderr contains "Response:"
// expect: stderr contains "HTTP/1.1 200 OK"
// expect: stdout lacks "Request:"
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.post(`${__ENV.BASE_URL}/echo?debug=1`, 'debug-body');
}
