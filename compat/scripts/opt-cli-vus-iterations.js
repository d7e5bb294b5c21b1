// k6 docs, options reference: `-u/--vus` and `-i/--iterations` on the
// command line set the same options as the script would: 2 VUs share 6
// iterations.
// args: -u 2 -i 6
// expect: exit 0
// expect: metric iterations count 6
// expect: metric vus_max value 2
// expect: server /ok 6
import http from 'k6/http';

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
