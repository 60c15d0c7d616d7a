#!/bin/sh
# 24-reconcile-stuck.sh - a request still queued past request_deadline (here
# no worker can run: the test holds the worker lock) is failed with a
# reason; --dry-run only reports.
REQUEST_DEADLINE=2s
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

hold_lock
lab "$SUSPEND" -c "$CONF" gpu-3 || fail "gpuburst-suspend exited $?"
REQ=$(sql "SELECT id FROM requests WHERE kind='suspend'")
expect_eq "queued" "$(sql "SELECT state FROM requests WHERE id='$REQ'")" queued
sleep 3
expect_eq "still queued (no worker could run)" "$(sql "SELECT state FROM requests WHERE id='$REQ'")" queued

ctl --json reconcile --dry-run >"$TMP/d.json" 2>"$TMP/d.err" || fail "dry run: $(cat "$TMP/d.err")"
expect_eq "dry run" "$(jq_py "$TMP/d.json" "[(a['action'], a['target'], a['done']) for a in d['actions']]")" \
	"[[\"stuck\", \"$REQ\", false]]"
expect_eq "unchanged by the dry run" "$(sql "SELECT state FROM requests WHERE id='$REQ'")" queued

ctl reconcile >"$TMP/r.out" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.out" "$TMP/r.err")"
grep -q "^stuck .*$REQ .*done" "$TMP/r.out" || fail "report: $(cat "$TMP/r.out")"
expect_eq "failed" "$(sql "SELECT state, result FROM requests WHERE id='$REQ'")" "failed|failed"
sql "SELECT reason FROM requests WHERE id='$REQ'" | grep -q "^deadline passed: suspend request still queued" ||
	fail "reason: $(sql "SELECT reason FROM requests WHERE id='$REQ'")"
expect_eq "event" "$(sql "SELECT json_extract(detail, '\$.action') FROM events WHERE kind='reconcile' AND request_id='$REQ'")" stuck
release_lock
ok "the request stuck in queued past request_deadline failed with a reason"
