#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# botocore_sign.py - sign requests with botocore's SigV4Auth at a frozen time
#
# Used by test_sigv4_botocore: reads a JSON list of requests on stdin
#   {"method", "url", "headers": {name: value}, "body_hex", "service",
#    "region", "access_key", "secret_key", "token" (or null),
#    "time": "YYYY-MM-DDTHH:MM:SS"}
# and writes a JSON object {"botocore": version, "results": [{"authorization",
# "amz_date", "canonical_request"}]} to stdout.  Nothing here talks to the
# network: botocore only computes the signature.
import datetime
import json
import sys
import types

import botocore
import botocore.auth
import botocore.awsrequest
import botocore.credentials


def frozen_datetime(when):
    class Frozen(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return cls(when.year, when.month, when.day, when.hour, when.minute,
                       when.second)

        @classmethod
        def now(cls, tz=None):
            t = cls.utcnow()
            return t.replace(tzinfo=tz) if tz else t

    return Frozen


def frozen_current(frozen):
    """botocore.compat.get_current_datetime(remove_tzinfo=True), frozen: naive
    UTC by default, UTC-aware when asked, as the original."""
    def current(remove_tzinfo=True):
        t = frozen.utcnow()
        return t if remove_tzinfo else t.replace(tzinfo=datetime.timezone.utc)

    return current


def sign(spec):
    when = datetime.datetime.strptime(spec["time"], "%Y-%m-%dT%H:%M:%S")
    # only botocore.auth sees the frozen clock: older botocore reads
    # datetime.datetime.utcnow() there, newer (1.36 and later) calls
    # get_current_datetime(), imported into botocore.auth from compat
    frozen = frozen_datetime(when)
    botocore.auth.datetime = types.SimpleNamespace(
        datetime=frozen, timezone=datetime.timezone)
    if hasattr(botocore.auth, "get_current_datetime"):
        botocore.auth.get_current_datetime = frozen_current(frozen)
    creds = botocore.credentials.Credentials(
        spec["access_key"], spec["secret_key"], spec.get("token"))
    auth = botocore.auth.SigV4Auth(creds, spec["service"], spec["region"])
    captured = []
    original = auth.canonical_request

    def capture(request):
        cr = original(request)
        captured.append(cr)
        return cr

    auth.canonical_request = capture
    request = botocore.awsrequest.AWSRequest(
        method=spec["method"], url=spec["url"], headers=dict(spec["headers"]),
        data=bytes.fromhex(spec["body_hex"]))
    auth.add_auth(request)
    return {
        "authorization": request.headers["Authorization"],
        "amz_date": request.headers["X-Amz-Date"],
        "canonical_request": captured[-1] if captured else "",
    }


def main():
    specs = json.load(sys.stdin)
    out = {"botocore": botocore.__version__,
           "results": [sign(s) for s in specs]}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
