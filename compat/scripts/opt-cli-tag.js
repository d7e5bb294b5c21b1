// k6 docs, options reference (--tag): `--tag env=staging` adds a tag to
// every metric of the test, as options.tags does.
// args: --tag env=staging
// expect: exit 0
// expect: metric http_reqs{env:staging} count 2
// expect: threshold http_reqs{env:staging} "count==2" ok
import http from 'k6/http';

export const options = { iterations: 2, thresholds: { 'http_reqs{env:staging}': ['count==2'] } };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
