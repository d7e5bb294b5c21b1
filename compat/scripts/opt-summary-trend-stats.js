// k6 docs, options reference (summaryTrendStats): the trend statistics the
// summary shows, also in the summary export: count and p(99) here.
// expect: exit 0
// expect: metric http_req_duration count 3
// expect: metric iteration_duration count 3
import http from 'k6/http';

export const options = { iterations: 3, summaryTrendStats: ['avg', 'p(99)', 'count'] };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
