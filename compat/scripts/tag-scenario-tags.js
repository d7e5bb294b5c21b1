// k6 docs, scenarios (tags): a scenario's tags are added to every metric it
// emits; the other scenario's requests do not carry them.
// expect: exit 0
// expect: metric http_reqs{flow:browse} count 3
// expect: threshold http_reqs{flow:browse} "count==3" ok
import http from 'k6/http';

export const options = {
  scenarios: {
    browse: { executor: 'per-vu-iterations', iterations: 3, tags: { flow: 'browse' } },
    other: { executor: 'per-vu-iterations', iterations: 2 },
  },
  thresholds: { 'http_reqs{flow:browse}': ['count==3'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
