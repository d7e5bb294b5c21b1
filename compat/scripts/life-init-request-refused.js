// k6 docs, test lifecycle: the init context cannot make HTTP requests
// ("Making http requests in the init context is not supported"); the error
// stops the test as an init error, exit 107.
// expect: exit 107
// expect: server /ok 0
import http from 'k6/http';

http.get(`${__ENV.BASE_URL}/ok`);

export default function () {}
