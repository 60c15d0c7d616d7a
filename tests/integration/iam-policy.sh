#!/bin/sh
# iam-policy.sh - etc/iam-policy.json, the least-privilege IAM policy of the
# README ("Using it on a real cluster"): valid JSON; it allows exactly the
# EC2 actions src/libcloud/gb_ec2.c calls (no more, no fewer); its tag
# conditions name exactly the tag keys the orchestrator writes; and the
# README shows the same policy.  etc/iam-node-policy.json, the nodes' role:
# valid JSON, CreateTags of the gpuburst:agent tag on the calling instance
# only, shown in the README too.
set -u
: "${GB_TOP_SRCDIR:?}"
PY=${PYTHON3:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
exec "$PY" - "$GB_TOP_SRCDIR" <<'PYEOF'
import json, re, sys

top = sys.argv[1]
fails = 0
def check(ok, what):
    global fails
    print(("ok - " if ok else "FAIL: ") + what)
    fails += not ok

policy = json.load(open(top + "/etc/iam-policy.json"))
check(True, "etc/iam-policy.json is valid JSON")

def actions(stmt):
    a = stmt["Action"]
    return set([a] if isinstance(a, str) else a)

allowed = set()
for s in policy["Statement"]:
    if s["Effect"] == "Allow":
        allowed |= {a for a in actions(s) if a.startswith("ec2:")}
# every action gb_ec2.c sends: ec2_call(c, "Action", ...), ack_call(c,
# "Action", ...) (an answer of a plain true),
# ec2_call(c, action, ...) with a `static const char *const action = "..."`,
# or a paginated call's `struct pager pg = { "Action", ...`
src = open(top + "/src/libcloud/gb_ec2.c").read()
called = set(re.findall(r'(?:ec2|ack)_call\(c, "(\w+)"', src))
if re.search(r'ec2_call\(c, pg->action,', src):
    called |= set(re.findall(r'struct pager pg = \{ "(\w+)"', src))
if re.search(r'ec2_call\(c, action,', src):
    called |= set(re.findall(r'const char \*const action = "(\w+)"', src))
called = set("ec2:" + a for a in called)
check(called and allowed == called,
      "the policy allows exactly the EC2 actions gb_ec2.c calls: %s (policy: %s)" %
      (", ".join(sorted(called)), ", ".join(sorted(allowed))))
check(all(a != "ec2:*" for s in policy["Statement"] if s["Effect"] == "Allow" for a in actions(s)),
      "no ec2:* allowed")

written = set(re.findall(r'\(struct gb_ec2_kv\)\{ "([^"]+)"',
                         open(top + "/src/liborch/orch_call.c").read()))
# and the cost tags (gb_orch_launch_cost_tags), by their default keys
written |= set(re.findall(r'K_STR\("\w+", \w+, "([^"]+)", CF_EMPTY_NULL,\s*\.check = check_tag_key\)',
                          open(top + "/src/libconf/conf_schema.c").read()))
launch_keys = set()
for s in policy["Statement"]:
    if s["Effect"] == "Allow" and actions(s) == {"ec2:RunInstances"}:
        launch_keys |= set(s.get("Condition", {}).get("ForAllValues:StringEquals", {}).get("aws:TagKeys", []))
check(written and launch_keys == written,
      "RunInstances may set exactly the tag keys the orchestrator writes: %s" % ", ".join(sorted(written)))
term = [s for s in policy["Statement"] if s["Effect"] == "Allow" and "ec2:TerminateInstances" in actions(s)]
check(len(term) == 1 and "aws:ResourceTag/gpuburst:cluster" in term[0]["Condition"]["StringEquals"],
      "TerminateInstances only on instances tagged gpuburst:cluster")

readme = open(top + "/README.md").read()
# the section "### IAM policy" shows both (other sections may name them)
readme = readme[readme.find("### IAM policy"):]
m = re.search(r"```json\n(.*?)```", readme, re.S)
check(m is not None and json.loads(m.group(1)) == policy,
      "README.md shows etc/iam-policy.json")

# the nodes' role: CreateTags of the gpuburst:agent tag on the calling
# instance itself, nothing else
node = json.load(open(top + "/etc/iam-node-policy.json"))
check(True, "etc/iam-node-policy.json is valid JSON")
agent_tag = re.search(r'#define GB_RECONCILE_AGENT_TAG "([^"]+)"',
                      open(top + "/src/libworker/gb_reconcile.h").read()).group(1)
st = node["Statement"]
cond = st[0].get("Condition", {}) if len(st) == 1 else {}
check(len(st) == 1 and st[0]["Effect"] == "Allow" and actions(st[0]) == {"ec2:CreateTags"},
      "the node policy allows ec2:CreateTags alone")
check(len(st) == 1 and st[0]["Resource"] == "${ec2:SourceInstanceARN}",
      "... on the calling instance only (Resource ${ec2:SourceInstanceARN})")
check(cond.get("ForAllValues:StringEquals", {}).get("aws:TagKeys") == [agent_tag] and
      cond.get("Null") == {"ec2:SourceInstanceARN": "false", "aws:TagKeys": "false"} and
      set(cond) == {"ForAllValues:StringEquals", "Null"},
      "... of the tag key %s only (reconcile reads it), with the keys present" % agent_tag)
m = re.search(r"```json\n(.*?)```", readme[readme.find("etc/iam-node-policy.json"):], re.S)
check(m is not None and json.loads(m.group(1)) == node,
      "README.md shows etc/iam-node-policy.json")
sys.exit(1 if fails else 0)
PYEOF
