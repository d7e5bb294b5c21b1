// k6 docs, using-k6/environment-variables: `k6 run` passes the system's
// environment variables to __ENV (--include-system-env-vars defaults to
// true for k6 run); -e wins over the system's.
// env: COMPAT_SYSTEM_VAR=from-system COMPAT_BOTH=system
// args: -e COMPAT_BOTH=flag
// expect: exit 0
// expect: check "system variable" 1 0
// expect: check "-e wins" 1 0
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(__ENV, {
    'system variable': (e) => e.COMPAT_SYSTEM_VAR === 'from-system',
    '-e wins': (e) => e.COMPAT_BOTH === 'flag',
  });
}
