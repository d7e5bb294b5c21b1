// k6 docs, javascript-api/k6-http/url: http.url`...${id}` gives all the URLs
// of one template one name tag, the template with ${} for the values.
// expect: exit 0
// expect: metric http_reqs{name:{{BASE_URL}}/items/${}} count 3
import http from 'k6/http';

export const options = {
  iterations: 1,
  thresholds: { 'http_reqs{name:{{BASE_URL}}/items/${}}': ['count==3'] },
};

export default function () {
  for (const id of [1, 2, 3]) {
    http.get(http.url`{{BASE_URL}}/items/${id}`);
  }
}
