// k6 docs, javascript-api/k6-http/post: an object body is sent
// form-urlencoded.
// expect: exit 0
// expect: check "form fields" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.post(`${__ENV.BASE_URL}/form-submit`, { user: 'alice', role: 'admin' });
  check(res.json(), { 'form fields': (j) => j.form.user === 'alice' && j.form.role === 'admin' });
}
