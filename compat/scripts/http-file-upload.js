// k6 docs, javascript-api/k6-http/file: http.file() in a body object makes
// a multipart/form-data upload with the file's name and type.
// expect: exit 0
// expect: check "multipart upload" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.post(`${__ENV.BASE_URL}/echo`, {
    note: 'hello',
    upload: http.file('file contents', 'notes.txt', 'text/plain'),
  });
  check(res.json(), {
    'multipart upload': (e) =>
      e.headers['Content-Type'].startsWith('multipart/form-data') &&
      e.body.includes('filename="notes.txt"') &&
      e.body.includes('file contents'),
  });
}
