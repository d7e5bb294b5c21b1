// k6 docs, javascript-api/console: console output goes to stderr as k6's
// log lines (level, message, source=console), not to stdout.
// expect: exit 0
// expect: stderr contains "level=info msg=\"hello compat\" source=console"
// expect: stdout lacks "hello compat"
export const options = { iterations: 1 };

export default function () {
  console.log('hello compat');
}
