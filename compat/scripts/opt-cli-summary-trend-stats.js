// k6 docs, options reference (--summary-trend-stats): the flag sets the
// trend statistics, overriding the script's option.
// args: --summary-trend-stats min,max,count
// expect: exit 0
// expect: metric http_req_duration count 2
import http from 'k6/http';

export const options = { iterations: 2, summaryTrendStats: ['avg'] };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
