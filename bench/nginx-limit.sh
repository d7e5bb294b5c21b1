#!/usr/bin/env bash
# bench/nginx-limit.sh — a real shedding target: nginx with limit_req at 400 r/s.
#
# Usage:
#   bench/nginx-limit.sh start        start nginx in the background, print its URL
#   bench/nginx-limit.sh stop         stop it
#   bench/nginx-limit.sh -- CMD...    start, run CMD with $TARGET set to the URL, stop
#
# One nginx worker on 127.0.0.1:$PORT (default 18400):
#   $TARGET/limited  limit_req_zone $binary_remote_addr rate=$RATE r/s (400),
#                    limit_req burst=$BURST (20) nodelay, limit_req_status 503 —
#                    above the rate the excess is answered 503 at once (a target
#                    that sheds) once the burst allowance is spent
#   $TARGET/         the same small static body, unlimited
# Installs nginx-light from Debian's packages if nginx is missing. Not part of
# make test. Example:
#   bench/nginx-limit.sh -- sh -c 'throttle run --url $TARGET/limited --rate 20000 --floor 10 --duration 60s --out r.json'
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PORT=${PORT:-18400}
RATE=${RATE:-400}
BURST=${BURST:-20}
STATE=${STATE:-/tmp/throttle-bench-nginx-limit-$PORT}

target_url() { echo "http://127.0.0.1:$PORT"; }

target_start() {
	ensure_pkgs nginx:nginx-light curl:curl
	mkdir -p "$STATE/www" "$STATE/tmp"
	chmod 755 "$STATE" "$STATE/www" # workers run unprivileged and must read the body
	printf 'ok\n' >"$STATE/www/index.html"
	cat >"$STATE/nginx.conf" <<CONF
worker_processes 1;
pid $STATE/pid;
error_log $STATE/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_temp_path $STATE/tmp/body;
  proxy_temp_path $STATE/tmp/proxy;
  fastcgi_temp_path $STATE/tmp/fastcgi;
  uwsgi_temp_path $STATE/tmp/uwsgi;
  scgi_temp_path $STATE/tmp/scgi;
  default_type text/plain;
  limit_req_zone \$binary_remote_addr zone=cap:1m rate=${RATE}r/s;
  server {
    listen 127.0.0.1:$PORT;
    root $STATE/www;
    # try_files serves the file from this location, so limit_req (which runs
    # before it) applies; a plain "return 200" would bypass limit_req.
    location = /limited {
      limit_req zone=cap burst=${BURST} nodelay;
      limit_req_status 503;
      try_files /index.html =404;
    }
    location / { try_files /index.html =404; }
  }
}
CONF
	nginx -e "$STATE/error.log" -p "$STATE" -c "$STATE/nginx.conf"
	wait_url "$(target_url)/limited"
}

target_stop() {
	stop_pidfile "$STATE/pid"
	rm -rf "$STATE"
}

target_main "$@"
