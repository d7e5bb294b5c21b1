// k6 docs, using-k6/tags-and-groups (test-wide tags): options.tags are
// added to every metric of the test.
// expect: exit 0
// expect: metric http_reqs{team:shop} count 4
// expect: threshold http_reqs{team:shop} "count==4" ok
import http from 'k6/http';

export const options = {
  iterations: 4,
  tags: { team: 'shop' },
  thresholds: { 'http_reqs{team:shop}': ['count==4'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
