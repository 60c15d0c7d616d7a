#!/usr/bin/python3
# sim-calls.py PORT [PREFIX] - the EC2 calls gpuburst-cloudsim on
# 127.0.0.1:PORT has answered, by action, on one line: "N (Action n, ...)".
import json
import sys
import urllib.request

s = json.load(urllib.request.urlopen("http://127.0.0.1:%s/_sim/state" % sys.argv[1]))
a = {k: v["calls"] for k, v in s["faults"]["actions"].items() if v["calls"]}
print("%s%d (%s)" % (sys.argv[2] if len(sys.argv) > 2 else "", sum(a.values()),
                     ", ".join("%s %d" % kv for kv in sorted(a.items()))))
