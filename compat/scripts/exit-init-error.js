// k6 docs (exit codes): an exception in the init context is a script
// error: no test runs, exit 107.
// expect: exit 107
// expect: stderr contains "broken init"
// expect: server /ok 0
import http from 'k6/http';

throw new Error('broken init');

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
