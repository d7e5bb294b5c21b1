// k6 docs, results-output/end-of-test (--summary-mode=full): everything
// compact shows, plus the other k6 metrics and each group's and each
// scenario's results.
// args: --summary-mode=full
// expect: exit 0
// expect: stdout contains "█ TOTAL RESULTS"
// expect: stdout contains "http_req_waiting"
// expect: stdout contains "█ GROUP: login"
// expect: stdout contains "✓ logged in"
// expect: stdout contains "█ SCENARIO: default"
import http from 'k6/http';
import { check, group } from 'k6';

export const options = { iterations: 2 };

export default function () {
  group('login', () => {
    check(http.get(`${__ENV.BASE_URL}/ok`), { 'logged in': (r) => r.status === 200 });
  });
}
