// k6 docs, using-k6/tags-and-groups (user-defined tags): params.tags are
// added to a request's metrics; `name` groups URLs.
// expect: exit 0
// expect: metric http_reqs{name:home} count 2
// expect: metric http_reqs{name:about} count 1
// expect: threshold http_reqs{name:home} "count==2" ok
import http from 'k6/http';

export const options = {
  iterations: 1,
  thresholds: {
    'http_reqs{name:home}': ['count==2'],
    'http_reqs{name:about}': ['count==1'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok?v=1`, { tags: { name: 'home' } });
  http.get(`${__ENV.BASE_URL}/ok?v=2`, { tags: { name: 'home' } });
  http.get(`${__ENV.BASE_URL}/echo`, { tags: { name: 'about' } });
}
