# Sourced by scripts/bench.sh: the Django stack the issue compares against (django-tenants,
# DRF, simplejwt; gunicorn with 2 x cores + 1 sync workers), serving the same read
# (GET report-settings of a school, bearer token) from its own database on the same
# PostgreSQL. The app is in scripts/bench/django/; its packages come from PyPI into .venv/.

DJANGO_PACKAGES=(Django==5.2.19 djangorestframework==3.18.3 djangorestframework_simplejwt==5.5.1
  django-tenants==4.0.1 psycopg2-binary==2.9.13 gunicorn==27.0.1)
django_pid=""

# Starts gunicorn on port $1 over a fresh database $2; writes the wrk script for the read
# to $3.
django_start() {
  local port="$1" db="$2" lua="$3" root="$PWD"
  if ! .venv/bin/python -c "import django_tenants, rest_framework_simplejwt, gunicorn" >/dev/null 2>&1; then
    echo "installing the Django stack into .venv (PyPI)" >&2
    [ -x .venv/bin/pip ] || python3 -m venv .venv
    .venv/bin/pip install -q "${DJANGO_PACKAGES[@]}"
  fi
  psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"
  local app="$work/django"
  cp -r scripts/bench/django "$app"
  export DJANGO_DATABASE_URL
  DJANGO_DATABASE_URL="$(pg_url_for "$db")"
  local token
  token=$(cd "$app" && "$root/.venv/bin/python" setup_bench.py | tail -1)
  printf 'wrk.headers["Host"] = "bench1.localhost"\nwrk.headers["Authorization"] = "Bearer %s"\n' \
    "$token" > "$lua"
  (cd "$app" && exec "$root/.venv/bin/gunicorn" -w $(( $(nproc) * 2 + 1 )) \
    -b "127.0.0.1:$port" --log-level warning benchsite.wsgi) &
  django_pid=$!
  for _ in $(seq 100); do
    curl -sf -H "Host: bench1.localhost" -H "Authorization: Bearer $token" \
      "http://127.0.0.1:$port/api/v1/school/report-settings/" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "the Django server did not answer" >&2
  return 1
}

django_stop() {
  [ -n "$django_pid" ] && kill "$django_pid" 2>/dev/null && wait "$django_pid" 2>/dev/null || true
  django_pid=""
}
