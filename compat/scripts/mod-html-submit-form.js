// k6 docs, javascript-api/k6-http/response/response-submitform: submits
// the page's form with its own fields (the hidden csrf) and the given ones.
// expect: exit 0
// expect: check "form posted" 1 0
// expect: server /form-submit 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/html`);
  const res = page.submitForm({ formSelector: '#login', fields: { user: 'alice' } });
  check(res, { 'form posted': (r) => r.json().form.user === 'alice' && r.json().form.csrf === 'tok-42' });
}
