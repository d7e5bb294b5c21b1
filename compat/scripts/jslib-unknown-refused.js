// A jslib library throttle does not build in cannot be fetched where the
// network is closed: it is refused by name before any traffic.
// expect: exit 1..255
// expect: stderr contains "jslib library \"aws\""
// expect: server /echo 0
import http from 'k6/http';
import { S3Client } from 'https://jslib.k6.io/aws/0.11.0/s3.js';

export default function () {
  http.get(`${__ENV.BASE_URL}/echo`);
}
