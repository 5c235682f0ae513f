#!/usr/bin/env bash
# test_pager_triage.sh: the triage page is safe to link to.
#
# A pager of its own consumer group pages one gate alert produced straight
# onto perf.alerts.v1; then, against its triage page, with curl:
#   - GET and HEAD of the signed view link, and of signed one-click
#     "true" / "false" links (what a chat tool's link preview fetches), show
#     the page and record nothing (before: a HEAD on action=true recorded
#     true_regression);
#   - the verdict is the form's POST: with the token and CSRF token the page
#     minted for (true, compiler) it is recorded once; the same POST again
#     records nothing;
#   - a link with an owner or a triager added, or a POST whose owner is not
#     the one its token signs, is refused (403) and records nothing (before:
#     owner and by were outside the signature: one link, four owners, four
#     verdicts and the routing flipped); a POST without the CSRF token, or
#     with another choice's, is refused;
#   - a hostile "by" (<img src=x onerror=alert(1)>) is refused (400) and
#     never stored (before: stored verbatim);
#   - a signed link to a page that does not exist is 404.
# Then headless Chromium (cdp_click.py) opens the page, chooses owner "model",
# types its name and presses "false regression": the verdict is recorded as
# chosen, in PostgreSQL and on perf.triage.v1.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl chromium
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_pager_triage pt
key="triage-test-key-$ns"
port=$(free_port)
base=http://127.0.0.1:$port

"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
PW_HTTP_PORT=$port PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="$key" PW_PAGER_BUDGET_PER_WEEK=1000 \
  PW_PAGER_PAGE_HOLD_MAX=1s "$PW_BUILD/services/pager/pw-pager" >"$work/pager.log" 2>&1 &
pid[pager]=$!
pager_joined "$work/pager.log" "${pid[pager]}"
printf 'alert_id: "gate-%s" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE created_unix_us: %s
series_key: "chat.%s/hlo:1/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
series { model: "chat.%s" hlo_fingerprint: "hlo:1" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }
baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.2 n: 5 } delta { pct: 7.7 z_robust: 10 fdr_q: 0.001 }
effect_gate { mde_pct: 1 passed_min_effect: true } verdict: VERDICT_BLOCKING release_id: "rc-%s"' \
  "$ns" "$(($(date +%s) * 1000000))" "$ns" "$ns" "$ns" |
  protoc --encode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto >"$work/alert.bin" || fail "encoding the alert"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$ns" "$work/alert.bin" || fail "producing the alert"
page=pg-gate-$ns
deadline=$((SECONDS + 60))
until [ -n "$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$page'")" ]; do
  [ $SECONDS -lt $deadline ] || fail "no page within 60 s"
  sleep 0.3
done
url=$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$page'")
vlog() { q "SELECT count(*) FROM perfwatch.triage_verdict_log WHERE page_id = '$page'"; }
# link PAGE ACTION [OWNER BY]: a link signed as the pager signs them (payload.c), computed here
link() {
  python3 - "$key" "$base" "$@" <<'PY'
import hmac, hashlib, sys, time, urllib.parse
key, base, page, action = sys.argv[1:5]
owner, by = (sys.argv[5:7] + ["", ""])[:2]
exp = int(time.time()) + 3600
msg = "perfwatch-triage\n%s\n%s\n%d" % (page, action, exp)
if owner or by:
    msg += "\nowner=%s\nby=%s" % (owner, by)
sig = hmac.new(key.encode(), msg.encode(), hashlib.sha256).hexdigest()
q = {"page": page, "action": action, "exp": exp, "sig": sig}
if owner or by:
    q.update(owner=owner, by=by)
print(base + "/triage?" + urllib.parse.urlencode(q))
PY
}
# status METHOD URL [curl args]: the HTTP status, the body in $work/body.html
status() {
  local m=$1 u=$2
  shift 2
  if [ "$m" = HEAD ]; then curl -sS -o "$work/body.html" -w '%{http_code}' -I "$u" "$@"
  else curl -sS -o "$work/body.html" -w '%{http_code}' -X "$m" "$u" "$@"; fi
}

# --- GET and HEAD change nothing ---------------------------------------------------------------
true_link=$(link "$page" true)
false_link=$(link "$page" false)
for l in "$url" "$true_link" "$false_link"; do
  for m in HEAD GET HEAD GET; do
    s=$(status "$m" "$l")
    [ "$s" = 200 ] || fail "$m ${l%%&sig*}: $s"
  done
done
[ "$(vlog)" = 0 ] || fail "GET or HEAD recorded $(vlog) verdicts"
grep -q 'This link proposes: false regression' "$work/body.html" || fail "a false link's page does not say what it proposes"
grep -q '<form id="verdict"' "$work/body.html" || fail "no verdict form"
echo "test_pager_triage: 12 GETs and HEADs of the view, true and false links: 200, 0 verdicts recorded"

# --- the form's POST ------------------------------------------------------------------------------
status GET "$url" >/dev/null
cp "$work/body.html" "$work/form.html"
# form_data FORM_HTML OUTCOME OWNER [FIELD=VALUE|FIELD=DROP|FIELD=FROM:OTHER...]: the body a browser posts
# for that choice (the page's hidden fields, by=alice), with overrides
form_data() {
  python3 - "$@" <<'PY'
import html.parser, sys, urllib.parse
path, outcome, owner = sys.argv[1:4]
over = dict(a.split("=", 1) for a in sys.argv[4:])
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.f = {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden":
            self.f[a["name"]] = a["value"]
p = P(); p.feed(open(path).read())
f = {k: p.f[k] for k in ("page", "exp", "nonce")}
f.update(outcome=outcome, owner=owner, by="alice")
for k in ("t", "c"):
    name = "%s_%s_%s" % (k, outcome, owner)
    if name in p.f:
        f[name] = p.f[name]
for k, v in over.items():
    if v == "DROP":
        f.pop(k, None)
    elif v.startswith("FROM:"):
        f[k] = p.f[v[5:]]
    else:
        f[k] = v
print(urllib.parse.urlencode(f))
PY
}
post() { # STATUS FIELDS...: posts the form, expects STATUS
  local want=$1 data s
  shift
  data=$(form_data "$work/form.html" "$@")
  s=$(status POST "$base/triage" -H 'Content-Type: application/x-www-form-urlencoded' --data-raw "$data")
  [ "$s" = "$want" ] || fail "POST $*: $s, want $want: $(grep -o '<p id="reason">[^<]*' "$work/body.html" || head -c 300 "$work/body.html")"
}
post 200 true compiler
grep -q 'recorded: true regression, owner compiler, by alice' "$work/body.html" || fail "the POST's page does not say it recorded"
[ "$(vlog)" = 1 ] || fail "$(vlog) verdicts after one POST"
[ "$(q "SELECT outcome || ' ' || routed_to || ' ' || triager FROM perfwatch.triage_verdicts WHERE page_id = '$page'")" = \
  "true_regression compiler alice" ] || fail "triage_verdicts: $(q "SELECT row_to_json(t) FROM perfwatch.triage_verdicts t WHERE page_id = '$page'")"
post 200 true compiler
grep -q 'already recorded' "$work/body.html" || fail "the same POST again does not say it was already recorded"
[ "$(vlog)" = 1 ] || fail "the same POST recorded again ($(vlog))"
echo "test_pager_triage: POST with the token and CSRF token of (true, compiler): recorded once; the same POST again: already recorded"

# --- tampered owner and triager, CSRF ------------------------------------------------------------
for added in "&owner=model" "&by=mallory" "&owner=infra&by=mallory"; do
  s=$(status GET "$url$added")
  [ "$s" = 403 ] || fail "a view link with $added: $s, want 403"
  s=$(status GET "$true_link$added")
  [ "$s" = 403 ] || fail "a true link with $added: $s, want 403"
done
signed=$(link "$page" true infra bob)
[ "$(status GET "$signed")" = 200 ] || fail "a link signing its owner and triager is refused"
[ "$(status GET "${signed/owner=infra/owner=model}")" = 403 ] || fail "its owner changed is not refused"
[ "$(status GET "${signed/by=bob/by=mallory}")" = 403 ] || fail "its triager changed is not refused"
post 403 true model t_true_model=FROM:t_true_compiler c_true_model=FROM:c_true_compiler
post 403 false compiler t_false_compiler=FROM:t_true_compiler c_false_compiler=FROM:c_true_compiler
post 403 true model c_true_model=DROP
post 403 true model c_true_model=FROM:c_true_infra
post 403 true model nonce=0123456789abcdef0123456789abcdef
post 400 true model outcome=maybe
post 400 true nobody
[ "$(status POST "$base/triage" --data-raw "page=$page")" = 400 ] || fail "a form-less POST is not refused"
[ "$(vlog)" = 1 ] || fail "a refused request recorded a verdict ($(vlog))"
echo "test_pager_triage: owner or triager added to or changed in a link, another choice's token, no or another CSRF token, another nonce: 403; nothing recorded"

# --- a hostile triager -----------------------------------------------------------------------------
for by in '<img src=x onerror=alert(1)>' 'alice bob' "a'b" "$(printf 'a%.0s' $(seq 65))"; do
  post 400 false model "by=$by"
  grep -q 'must be a login or an e-mail address' "$work/body.html" || fail "the refusal of by=\"$by\" does not say why"
done
[ "$(vlog)" = 1 ] || fail "a hostile triager recorded a verdict"
[ "$(q "SELECT count(*) FROM perfwatch.triage_verdict_log WHERE triager ~ '[<> ]'")" = 0 ] || fail "a hostile triager was stored"
hostile=$(link "$page" true compiler '<img src=x onerror=alert(1)>')
[ "$(status GET "$hostile")" = 403 ] || fail "a signed link with a hostile triager is not refused"
echo "test_pager_triage: by=<img src=x onerror=alert(1)> and three more: 400, never stored"

# --- a signed link to a page that does not exist ---------------------------------------------------
[ "$(status GET "$(link "pg-none-$ns" view)")" = 404 ] || fail "a signed link to a missing page: not 404"
grep -q 'no such page' "$work/body.html" || fail "the 404 page does not say why"
[ "$(status HEAD "$(link "pg-none-$ns" true)")" = 404 ] || fail "HEAD of a signed link to a missing page: not 404"
curl -fsS "$base/metrics" >"$work/metrics.txt"
for r in tampered malformed csrf invalid_by not_found; do
  grep -q "^perfwatch_pager_triage_refused_total{reason=\"$r\"} [1-9]" "$work/metrics.txt" ||
    fail "perfwatch_pager_triage_refused_total{reason=\"$r\"} not counted"
done
echo "test_pager_triage: a signed link to a missing page: 404; refusals counted by reason"

# --- the form in headless Chromium -------------------------------------------------------------------
python3 tests/integration/cdp_click.py "$url" --expect-id verdict --expect-id payload --set owner=model \
  --set by=carol --click btn-false --out "$work/click.txt" || fail "chromium could not submit the form"
[ "$(head -1 "$work/click.txt")" = 200 ] || fail "the form's POST answered $(head -1 "$work/click.txt")"
grep -q 'recorded: false regression, owner model, by carol' "$work/click.txt" || fail "the page after the click: $(sed -n 2,4p "$work/click.txt")"
[ "$(q "SELECT outcome || ' ' || routed_to || ' ' || triager FROM perfwatch.triage_verdicts WHERE page_id = '$page'")" = \
  "false_regression model carol" ] || fail "chromium's verdict is not in triage_verdicts"
[ "$(vlog)" = 2 ] || fail "$(vlog) verdicts logged, want 2"
deadline=$((SECONDS + 30))
until [ "$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.triage.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -cxF "$page")" = 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "the two TriageVerdicts of $page are not on perf.triage.v1"
  sleep 0.5
done
echo "test_pager_triage: chromium chose owner model, typed carol, pressed \"false regression\": recorded as chosen, in PostgreSQL and on perf.triage.v1"
echo "PASS: pager triage"
