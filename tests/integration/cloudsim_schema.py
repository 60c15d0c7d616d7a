#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# cloudsim_schema.py - gpuburst-cloudsim's parameter schema against
# botocore's EC2 model (used by cloudsim-schema.sh)
#
#   cloudsim_schema.py SCHEMA.json ENDPOINT DATA_DIR
#
# SCHEMA.json is what `gpuburst-cloudsim --dump-schema` printed: the tables
# the simulator really enforces.  The EC2 model is botocore's own
# data/ec2/2016-11-15/service-2.json (or .json.gz), read here, not copied.
#
#  1. Every wire name the simulator accepts exists in the model's input of
#     that operation, named as botocore's EC2Serializer names it, with a
#     compatible type, enum values among the model's, the model's integer
#     range where it states one; every member the model requires is
#     required by the simulator.
#  2. Requests made by botocore's serializer (create_serializer('ec2')) and
#     signed by botocore's SigV4Auth, for every action, with realistic
#     parameters (InstanceMarketOptions, IamInstanceProfile,
#     TagSpecifications, MetadataOptions, NetworkInterfaces into a
#     placement group; DescribeInstanceTypes, the placement-group calls and
#     DescribeSecurityGroups parsed back) are accepted by the simulator
#     at ENDPOINT, and together use every wire name of its schema.
#  3. Each accepted name misspelled is UnknownParameter, each bad enum,
#     integer, boolean or timestamp value InvalidParameterValue, each
#     required parameter left out MissingParameter; no Version, another
#     Version, no Action, a parameter given twice: EC2's codes.
#     Capacity reservations too: DescribeCapacityReservations, RunInstances
#     into one, and the Capacity Block calls where this botocore models
#     them (an older model is printed as "not checked", not failed).
#  4. botocore's EC2 response parser reads the RunInstances and
#     DescribeInstances answers, and every Instance member present in all
#     of EC2's samples in DATA_DIR (tests/data/ec2) is present in every
#     instance the simulator returns.
#
#  5. The "sts" part of SCHEMA.json against botocore's STS model
#     (data/sts/2011-06-15): member names, types, string lengths, integer
#     ranges, the characters of each pattern, required members; requests
#     serialized by botocore's query serializer and signed for "sts"
#     (AssumeRole, GetCallerIdentity with the session) or unsigned
#     (AssumeRoleWithWebIdentity) are answered, and botocore's query parser
#     reads the answers (Expiration a datetime).
#
# Exit 0 when all holds, 1 with a FAIL line per problem, 77 without botocore.
# Nothing here talks to anything but ENDPOINT (127.0.0.1).
import base64
import datetime
import gzip
import json
import os
import re
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

try:
    import botocore
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    import botocore.model
    import botocore.parsers
    import botocore.serialize
except ImportError as e:
    print("SKIP: python3 cannot import botocore (%s); "
          "apt-get install python3-botocore" % e)
    sys.exit(77)

REGION = "ap-south-1"
AKID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
AMI = "ami-0123456789abcdef0"
NS = "{http://ec2.amazonaws.com/doc/2016-11-15/}"

failures = []
unchecked = []

# What the simulator accepts that botocore models only from some release on
# (capacity-block in 2023): an older model lacking them is reported as not
# checked, never as a failure; anything else missing from the model fails.
NEWER_VALUES = {
    ("RunInstances", "InstanceMarketOptions.MarketType"): {"capacity-block"},
    ("RunInstances", "CapacityReservationSpecification."
     "CapacityReservationPreference"): {"capacity-reservations-only"},
}
NEWER_OPS = {"DescribeCapacityBlockOfferings"}


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def ok(msg):
    print("ok - " + msg)


# ---- the model ---------------------------------------------------------

def load_model(service="ec2", version="2016-11-15"):
    """botocore's own model of [service] (service-2.json or .json.gz);
    exit 77 when this botocore has none."""
    d = os.path.join(os.path.dirname(botocore.__file__), "data", service,
                     version)
    for name, opener in (("service-2.json", open),
                         ("service-2.json.gz", gzip.open)):
        path = os.path.join(d, name)
        if os.path.exists(path):
            with opener(path, "rt", encoding="utf-8") as f:
                data = json.load(f)
            print("# botocore %s, model %s" % (botocore.__version__, path))
            return botocore.model.ServiceModel(data, service)
    print("SKIP: botocore %s has no %s model in %s"
          % (botocore.__version__, service, d))
    sys.exit(77)


def wire_names(shape, naming, prefix="", seen=()):
    """{wire pattern: shape} of an input shape, as EC2Serializer flattens
    it: Name.Member for structures, Name.N for list items (its own
    _serialize_type_list), names from its _get_serialized_name."""
    out = {}
    t = shape.type_name
    if t == "structure":
        if shape.name in seen:
            return out
        for member, ms in shape.members.items():
            wn = naming._get_serialized_name(ms, member)
            out.update(wire_names(ms, naming,
                                  prefix + "." + wn if prefix else wn,
                                  seen + (shape.name,)))
    elif t == "list":
        out.update(wire_names(shape.member, naming, prefix + ".N", seen))
    elif t == "map":
        raise ValueError("%s: a map in an EC2 input" % prefix)
    else:
        out[prefix] = shape
    return out


def compatible(p, shape, newer=frozenset()):
    """'' when the simulator's parameter [p] fits the model's [shape]
    ([newer]: enum values a model may predate, noted as not checked)."""
    t = shape.type_name
    want = {"string": ("string",), "integer": ("integer", "long"),
            "boolean": ("boolean",), "timestamp": ("timestamp",),
            "enum": ("string",)}[p["type"]]
    if t not in want:
        return "type %s, the model's is %s" % (p["type"], t)
    if p["type"] == "enum":
        model = getattr(shape, "enum", None) or []
        extra = sorted(set(p["values"]) - set(model))
        if model and extra and set(extra) <= newer:
            unchecked.append("%s %s (botocore %s predates them)"
                             % (p["name"], extra, botocore.__version__))
            extra = []
        if not model or extra:
            return "enum values %s not in the model's %s" % (extra, model)
    if t in ("integer", "long"):
        for k in ("min", "max"):
            if k in shape.metadata and p.get(k) != shape.metadata[k]:
                return "%s %s, the model's is %s" % (k, p.get(k),
                                                     shape.metadata[k])
    return ""


def check_static(schema, model, naming):
    for action, params in schema["actions"].items():
        if action not in model.operation_names:
            if action in NEWER_OPS:
                unchecked.append("%s (botocore %s predates it)"
                                 % (action, botocore.__version__))
            else:
                fail("%s: no such operation in the model" % action)
            continue
        op = model.operation_model(action)
        names = wire_names(op.input_shape, naming)
        bad = 0
        for p in params:
            if p["name"] not in names:
                fail("%s: %s is no parameter of the model" % (action,
                                                              p["name"]))
                bad += 1
                continue
            why = compatible(p, names[p["name"]],
                             NEWER_VALUES.get((action, p["name"]), frozenset()))
            if why:
                fail("%s: %s: %s" % (action, p["name"], why))
                bad += 1
        for member in op.input_shape.required_members:
            wn = naming._get_serialized_name(
                op.input_shape.members[member], member)
            if not any(p.get("required") and
                       (p["name"] == wn or p["name"].startswith(wn + "."))
                       for p in params):
                fail("%s: the model requires %s (%s), the simulator does not"
                     % (action, member, wn))
                bad += 1
        if not bad:
            ok("%s: %d parameters, all in the model with its types, enums "
               "and ranges; its required members required"
               % (action, len(params)))


# ---- requests ------------------------------------------------------------

class Sim:
    def __init__(self, endpoint, model):
        self.endpoint = endpoint.rstrip("/") + "/"
        self.model = model
        self.serializer = botocore.serialize.create_serializer(
            "ec2", include_validation=True)
        self.creds = botocore.credentials.Credentials(AKID, SECRET)
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}))

    def serialize(self, action, params):
        """botocore's form of [params]: a dict of wire name -> value."""
        op = self.model.operation_model(action)
        return dict(self.serializer.serialize_to_request(params, op)["body"])

    def send(self, body):
        """POST [body] (a dict, or a raw form string) signed with SigV4.
        RET (status, raw XML bytes)."""
        req = botocore.awsrequest.AWSRequest(
            method="POST", url=self.endpoint, data=body,
            headers={"Content-Type":
                     "application/x-www-form-urlencoded; charset=utf-8"})
        botocore.auth.SigV4Auth(self.creds, "ec2", REGION).add_auth(req)
        prep = req.prepare()
        data = prep.body if isinstance(prep.body, bytes) else \
            prep.body.encode()
        r = urllib.request.Request(prep.url, data=data, method="POST",
                                   headers=dict(prep.headers))
        try:
            with self.opener.open(r, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def call(self, action, params):
        body = self.serialize(action, params)
        status, xml = self.send(body)
        return body, status, xml


def error_of(xml):
    """(Code, Message) of an EC2 error document, or (None, None)."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return None, None
    e = root.find("Errors/Error")
    if e is None:
        return None, None
    return e.findtext("Code"), e.findtext("Message")


def pattern(key):
    return re.sub(r"\.[1-9][0-9]*(?=\.|$)", ".N", key)


def misspelled(key):
    """[key] with the last letter of its last name dropped: Tag.1.Ke."""
    parts = key.split(".")
    i = max(k for k, v in enumerate(parts) if not v.isdigit())
    parts[i] = parts[i][:-1]
    return ".".join(parts)


def user_data(text):
    # botocore's handler (not its serializer) base64-encodes UserData
    return base64.b64encode(text.encode()).decode()


# ---- 2: botocore's requests are accepted ---------------------------------

def accepted(sim, accepted_bodies, action, params, want=200, code=None,
             what=""):
    """Serialize, send, expect [want] (and [code]); RET the parsed answer."""
    body, status, xml = sim.call(action, params)
    got, msg = error_of(xml) if status != 200 else (None, None)
    if status != want or got != code:
        fail("%s %s: HTTP %d %s (%s), want %d %s" % (
            action, what, status, got, msg, want, code))
        return None
    accepted_bodies.setdefault(action, []).append(body)
    if status != 200:
        return None
    op = sim.model.operation_model(action)
    return botocore.parsers.create_parser("ec2").parse(
        {"body": xml, "headers": {}, "status_code": status}, op.output_shape)


def instances_of(parsed, action):
    if action == "RunInstances":
        return parsed["Instances"]
    return [i for r in parsed["Reservations"] for i in r["Instances"]]


def run_all(sim):
    """Every action with realistic parameters. RET ({action: [bodies]},
    [parsed instances])."""
    bodies, seen = {}, []
    profile_arn = "arn:aws:iam::123456789012:instance-profile/gpuburst-node"
    spot = accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g5.xlarge", "MinCount": 1,
        "MaxCount": 2, "SubnetId": "subnet-schema-a",
        "SecurityGroupIds": ["sg-0123456789abcdef0"], "KeyName": "gpuburst",
        "ClientToken": "schema-spot-1",
        "UserData": user_data("#!/bin/sh\necho hi\n"),
        "IamInstanceProfile": {"Name": "gpuburst-node"},
        "TagSpecifications": [
            {"ResourceType": "instance",
             "Tags": [{"Key": "gpuburst:cluster", "Value": "schema"},
                      {"Key": "gpuburst:request", "Value": "req-1"}]},
            {"ResourceType": "volume", "Tags": [{"Key": "a", "Value": "b"}]}],
        "InstanceMarketOptions": {
            "MarketType": "spot",
            "SpotOptions": {"MaxPrice": "0.9",
                            "SpotInstanceType": "one-time",
                            "InstanceInterruptionBehavior": "terminate"}},
        "MetadataOptions": {"HttpTokens": "required",
                            "HttpPutResponseHopLimit": 2,
                            "HttpEndpoint": "enabled",
                            "HttpProtocolIpv6": "disabled",
                            "InstanceMetadataTags": "enabled"},
        "Monitoring": {"Enabled": True}, "EbsOptimized": False,
        "DryRun": False}, what="(spot, every option)")
    if spot:
        seen += instances_of(spot, "RunInstances")
        i = spot["Instances"][0]
        if i.get("InstanceLifecycle") != "spot" or \
           not i.get("SpotInstanceRequestId", "").startswith("sir-"):
            fail("the Spot launch returned lifecycle %r, request %r" % (
                i.get("InstanceLifecycle"), i.get("SpotInstanceRequestId")))
        prof = i.get("IamInstanceProfile", {})
        if prof.get("Arn") != profile_arn or \
           not re.fullmatch(r"AIPA[A-Z2-7]{17}", prof.get("Id", "")):
            fail("iamInstanceProfile %r" % prof)
        md = i.get("MetadataOptions", {})
        if md.get("HttpPutResponseHopLimit") != 2 or \
           md.get("InstanceMetadataTags") != "enabled":
            fail("metadataOptions %r" % md)
        ok("RunInstances with Spot options, profile, tags, metadata "
           "options: %d Spot instance(s), lifecycle spot, %s"
           % (len(spot["Instances"]), i.get("SpotInstanceRequestId")))
    od = accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g5.xlarge", "MinCount": 6,
        "MaxCount": 6, "Placement": {"AvailabilityZone": "ap-south-1a"},
        "IamInstanceProfile": {"Arn": profile_arn},
        "MetadataOptions": {"HttpTokens": "optional"}},
        what="(On-Demand, profile ARN, AZ)")
    if od:
        seen += instances_of(od, "RunInstances")
        if any("InstanceLifecycle" in i for i in od["Instances"]):
            fail("On-Demand instances have an instanceLifecycle")
    accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g5.xlarge", "MinCount": 1,
        "MaxCount": 1, "DryRun": True}, 412, "DryRunOperation", "(DryRun)")
    # accepted by the schema, refused by EC2's rule for one-time requests
    accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "MinCount": 1, "MaxCount": 1,
        "InstanceMarketOptions": {
            "MarketType": "spot", "SpotOptions": {
                "ValidUntil": datetime.datetime(2031, 1, 2, 3, 4, 5)}}},
        400, "InvalidParameterCombination", "(ValidUntil, one-time)")
    ids = [i["InstanceId"] for i in seen]
    page = accepted(sim, bodies, "DescribeInstances", {
        "Filters": [{"Name": "instance-state-name",
                     "Values": ["pending", "running"]},
                    {"Name": "instance-type", "Values": ["g5.*"]}],
        "MaxResults": 5, "DryRun": False}, what="(filters, MaxResults)")
    if page and page.get("NextToken"):
        nxt = accepted(sim, bodies, "DescribeInstances", {
            "MaxResults": 5, "NextToken": page["NextToken"],
            "Filters": [{"Name": "instance-state-name",
                         "Values": ["pending", "running"]},
                        {"Name": "instance-type", "Values": ["g5.*"]}]},
            what="(NextToken)")
        got = len(instances_of(page, "DescribeInstances")) + \
            (len(instances_of(nxt, "DescribeInstances")) if nxt else 0)
        if got != len(ids):
            fail("DescribeInstances pages: %d instances, launched %d"
                 % (got, len(ids)))
    else:
        fail("DescribeInstances MaxResults 5 over %d instances: no NextToken"
             % len(ids))
    desc = accepted(sim, bodies, "DescribeInstances",
                    {"InstanceIds": ids[:2]}, what="(InstanceIds)")
    if desc:
        seen += instances_of(desc, "DescribeInstances")
    accepted(sim, bodies, "CreateTags", {
        "Resources": ids[:2], "Tags": [{"Key": "Name", "Value": "x"},
                                       {"Key": "empty", "Value": ""}],
        "DryRun": False})
    off = accepted(sim, bodies, "DescribeInstanceTypeOfferings", {
        "LocationType": "availability-zone", "MaxResults": 5,
        "Filters": [{"Name": "instance-type", "Values": ["g*"]}],
        "DryRun": False})
    if off and off.get("NextToken"):
        accepted(sim, bodies, "DescribeInstanceTypeOfferings", {
            "LocationType": "availability-zone", "MaxResults": 5,
            "NextToken": off["NextToken"],
            "Filters": [{"Name": "instance-type", "Values": ["g*"]}]},
            what="(NextToken)")
    else:
        fail("DescribeInstanceTypeOfferings MaxResults 5 of 7: no NextToken")
    accepted(sim, bodies, "DescribeAvailabilityZones", {
        "ZoneNames": ["ap-south-1a"], "ZoneIds": ["aps1-az2"],
        "AllAvailabilityZones": True, "DryRun": False,
        "Filters": [{"Name": "state", "Values": ["available"]}]})
    types = accepted(sim, bodies, "DescribeInstanceTypes", {
        "MaxResults": 5, "DryRun": False,
        "Filters": [{"Name": "instance-type", "Values": ["g5.*", "g6?.xlarge"]}]},
        what="(filters, MaxResults)")
    if types and types.get("NextToken") and len(types["InstanceTypes"]) == 5:
        nxt = accepted(sim, bodies, "DescribeInstanceTypes", {
            "MaxResults": 5, "NextToken": types["NextToken"],
            "Filters": [{"Name": "instance-type",
                         "Values": ["g5.*", "g6?.xlarge"]}]}, what="(NextToken)")
        ok("DescribeInstanceTypes: %d + %d types in two pages"
           % (len(types["InstanceTypes"]), len(nxt["InstanceTypes"]) if nxt else 0))
    else:
        fail("DescribeInstanceTypes MaxResults 5 of 9: no NextToken")
    one = accepted(sim, bodies, "DescribeInstanceTypes",
                   {"InstanceTypes": ["g5.12xlarge"]}, what="(InstanceTypes)")
    if one:
        t = one["InstanceTypes"][0]
        gpu = t.get("GpuInfo", {}).get("Gpus", [{}])[0]
        if t.get("VCpuInfo", {}).get("DefaultVCpus") != 48 or \
           t.get("MemoryInfo", {}).get("SizeInMiB") != 196608 or \
           gpu.get("Name") != "A10G" or gpu.get("Count") != 4 or \
           "EfaSupported" not in t.get("NetworkInfo", {}):
            fail("DescribeInstanceTypes g5.12xlarge parsed as %r" % t)
    pg = accepted(sim, bodies, "CreatePlacementGroup", {
        "GroupName": "schema-spread", "Strategy": "spread", "DryRun": False,
        "TagSpecifications": [{"ResourceType": "placement-group",
                               "Tags": [{"Key": "gpuburst:job", "Value": "1"}]}]})
    if pg and pg["PlacementGroup"].get("GroupName") != "schema-spread":
        fail("CreatePlacementGroup answered %r" % pg)
    pgs = accepted(sim, bodies, "DescribePlacementGroups", {
        "GroupNames": ["schema-spread"], "DryRun": False,
        "Filters": [{"Name": "strategy", "Values": ["spread"]}]})
    if pgs and pg:
        accepted(sim, bodies, "DescribePlacementGroups",
                 {"GroupIds": [pg["PlacementGroup"]["GroupId"]]}, what="(GroupIds)")
    # a spread group takes any type; the interfaces are plain ones (no EFA type here)
    ni = accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g5.xlarge", "MinCount": 1,
        "MaxCount": 1, "Placement": {"GroupName": "schema-spread"},
        "NetworkInterfaces": [{
            "DeviceIndex": 0, "NetworkCardIndex": 0, "InterfaceType": "interface",
            "SubnetId": "subnet-schema-a", "Groups": ["sg-0123456789abcdef0"],
            "DeleteOnTermination": True}]}, what="(NetworkInterfaces, GroupName)")
    if ni:
        i = ni["Instances"][0]
        seen.append(i)
        if i["Placement"].get("GroupName") != "schema-spread" or \
           i["NetworkInterfaces"][0].get("InterfaceType") != "interface":
            fail("RunInstances into a group with interfaces: %r" % i)
    sgs = accepted(sim, bodies, "DescribeSecurityGroups",
                   {"GroupIds": ["sg-0123456789abcdef0"], "DryRun": False})
    if sgs:
        perm = sgs["SecurityGroups"][0]["IpPermissions"][0]
        if perm.get("IpProtocol") != "-1" or perm["UserIdGroupPairs"][0].get(
                "GroupId") != "sg-0123456789abcdef0":
            fail("DescribeSecurityGroups parsed as %r" % sgs)
    accepted(sim, bodies, "DescribeSecurityGroups", {"MaxResults": 5},
             what="(MaxResults)")
    accepted(sim, bodies, "DescribeSecurityGroups",
             {"MaxResults": 5, "NextToken": "not-a-token"},
             400, "InvalidNextToken", "(NextToken)")
    accepted(sim, bodies, "DeletePlacementGroup",
             {"GroupName": "schema-spread", "DryRun": False}, 400,
             "InvalidPlacementGroup.InUse", "(in use)")
    accepted(sim, bodies, "TerminateInstances",
             {"InstanceIds": ids[-1:], "DryRun": True}, 412,
             "DryRunOperation", "(DryRun)")
    accepted(sim, bodies, "TerminateInstances", {"InstanceIds": ids[-1:]})
    capacity_reservations(sim, bodies, seen)
    spot_price_history(sim, bodies)
    return bodies, seen


def enum_of(model, action, wire):
    """The enum values the model gives the wire name [wire] of [action]."""
    names = wire_names(model.operation_model(action).input_shape,
                       botocore.serialize.EC2Serializer())
    return getattr(names.get(wire), "enum", None) or []


def capacity_reservations(sim, bodies, seen):
    """DescribeCapacityReservations, RunInstances into reservations, and
    what this botocore models of Capacity Blocks."""
    crs = accepted(sim, bodies, "DescribeCapacityReservations", {
        "CapacityReservationIds": ["cr-0123456789abcdef0"], "DryRun": False,
        "Filters": [{"Name": "state", "Values": ["active"]}]}, what="(ids)")
    if crs:
        c = crs["CapacityReservations"][0]
        if c.get("AvailableInstanceCount") != 2 or \
           c.get("InstancePlatform") != "Linux/UNIX" or \
           not isinstance(c.get("StartDate"), datetime.datetime):
            fail("DescribeCapacityReservations parsed as %r" % c)
    page = accepted(sim, bodies, "DescribeCapacityReservations",
                    {"MaxResults": 1}, what="(MaxResults)")
    if page and page.get("NextToken"):
        accepted(sim, bodies, "DescribeCapacityReservations", {
            "MaxResults": 1, "NextToken": page["NextToken"]}, what="(NextToken)")
    else:
        fail("DescribeCapacityReservations MaxResults 1 of 2: no NextToken")
    target = {"CapacityReservationTarget": {
        "CapacityReservationId": "cr-0123456789abcdef0"}}
    run = accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g6.xlarge", "MinCount": 1,
        "MaxCount": 3, "CapacityReservationSpecification": target},
        what="(CapacityReservationTarget)")
    if run:
        seen += instances_of(run, "RunInstances")
        if len(run["Instances"]) != 2:
            fail("RunInstances into a reservation of 2: %d instances"
                 % len(run["Instances"]))
    accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g6.xlarge", "MinCount": 1,
        "MaxCount": 1, "CapacityReservationSpecification": target}, 400,
        "ReservationCapacityExceeded", "(reservation full)")
    accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g6.xlarge", "MinCount": 1,
        "MaxCount": 1, "CapacityReservationSpecification": {
            "CapacityReservationPreference": "none"}}, what="(preference)")
    accepted(sim, bodies, "RunInstances", {
        "ImageId": AMI, "InstanceType": "g6.xlarge", "MinCount": 1,
        "MaxCount": 1, "CapacityReservationSpecification": {
            "CapacityReservationTarget": {
                "CapacityReservationResourceGroupArn":
                "arn:aws:resource-groups:ap-south-1:123456789012:group/gpu"}}},
        400, "ReservationCapacityExceeded", "(resource group, full)")
    if "capacity-block" in enum_of(sim.model, "RunInstances",
                                   "InstanceMarketOptions.MarketType"):
        cb = accepted(sim, bodies, "RunInstances", {
            "ImageId": AMI, "InstanceType": "g6.xlarge", "MinCount": 1,
            "MaxCount": 1,
            "InstanceMarketOptions": {"MarketType": "capacity-block"},
            "CapacityReservationSpecification": {"CapacityReservationTarget": {
                "CapacityReservationId": "cr-0123456789abcdef1"}}},
            what="(capacity-block)")
        if cb:
            seen += instances_of(cb, "RunInstances")
    if "DescribeCapacityBlockOfferings" in sim.model.operation_names:
        off = accepted(sim, bodies, "DescribeCapacityBlockOfferings", {
            "InstanceType": "g6.xlarge", "InstanceCount": 2,
            "CapacityDurationHours": 24, "MaxResults": 1, "DryRun": False,
            "StartDateRange": datetime.datetime(2000, 1, 1),
            "EndDateRange": datetime.datetime(2100, 1, 1)})
        if off is not None and (len(off.get("CapacityBlockOfferings", [])) != 1
                                or not off.get("NextToken")):
            fail("DescribeCapacityBlockOfferings MaxResults 1 of 2: %r" % off)
        if off and off.get("NextToken"):
            accepted(sim, bodies, "DescribeCapacityBlockOfferings", {
                "CapacityDurationHours": 24, "NextToken": off["NextToken"]},
                what="(NextToken)")


def spot_price_history(sim, bodies):
    """DescribeSpotPriceHistory: the scenario's two Spot pools, parsed back
    (SpotPrice a string, Timestamp a datetime), one page at a time until
    the empty nextToken EC2 ends with."""
    hist = accepted(sim, bodies, "DescribeSpotPriceHistory", {
        "InstanceTypes": ["g5.xlarge", "g6.xlarge"], "DryRun": False,
        "ProductDescriptions": ["Linux/UNIX"], "AvailabilityZone": "ap-south-1a",
        "StartTime": datetime.datetime(2000, 1, 1),
        "EndTime": datetime.datetime(2100, 1, 1),
        "Filters": [{"Name": "spot-price", "Values": ["0.42*"]}]})
    if hist is not None:
        got = [(p.get("AvailabilityZone"), p.get("InstanceType"),
                p.get("ProductDescription"), p.get("SpotPrice"),
                isinstance(p.get("Timestamp"), datetime.datetime))
               for p in hist.get("SpotPriceHistory", [])]
        if got != [("ap-south-1a", "g5.xlarge", "Linux/UNIX", "0.420000", True)] \
           or hist.get("NextToken"):
            fail("DescribeSpotPriceHistory parsed as %r" % hist)
    seen, token, pages = [], None, 0
    while pages < 5:
        params = {"MaxResults": 1}
        if token:
            params["NextToken"] = token
        page = accepted(sim, bodies, "DescribeSpotPriceHistory", params,
                        what="(page %d)" % (pages + 1))
        if page is None:
            return
        pages += 1
        seen += [p["InstanceType"] for p in page.get("SpotPriceHistory", [])]
        token = page.get("NextToken")
        if not token:
            break
    if seen != ["g5.xlarge", "g6.xlarge"]:
        fail("DescribeSpotPriceHistory MaxResults 1: %r in %d pages" % (seen, pages))
    else:
        ok("DescribeSpotPriceHistory: parsed by botocore (SpotPrice a string, "
           "Timestamp a datetime), MaxResults 1 in %d pages to the empty "
           "nextToken" % pages)


def check_coverage(schema, bodies, model):
    for action, params in schema["actions"].items():
        if action not in model.operation_names and action in NEWER_OPS:
            continue
        used = {pattern(k) for b in bodies.get(action, []) for k in b}
        missing = [p["name"] for p in params if p["name"] not in used]
        if missing:
            fail("%s: no request made by botocore used %s" % (action,
                                                              missing))
        else:
            ok("%s: botocore's requests used all %d wire names, accepted"
               % (action, len(params)))


# ---- 3: what is refused, and how ---------------------------------------------

def expect(sim, what, body, code, needle=None):
    status, xml = sim.send(body)
    got, msg = error_of(xml)
    if status != 400 or got != code or (needle and needle not in (msg or "")):
        fail("%s: HTTP %d %s (%s), want 400 %s%s" % (
            what, status, got, msg, code,
            " naming %s" % needle if needle else ""))
        return False
    return True


BAD = {"enum": "not-a-value", "integer": "x1", "boolean": "yes",
       "timestamp": "tomorrow"}


def check_refusals(sim, schema, bodies):
    for action, params in schema["actions"].items():
        sent = bodies.get(action, [])
        if not sent:
            continue
        base = sent[0]
        n = 0
        for p in params:
            key = next((k for b in sent for k in b if pattern(k) == p["name"]),
                       None)
            if key is None:
                continue
            src = next(b for b in sent if key in b)
            body = dict(src)
            value = body.pop(key)
            typo = misspelled(key)
            body[typo] = value
            n += expect(sim, "%s %s misspelled %s" % (action, key, typo),
                        body, "UnknownParameter", typo)
            if p["type"] in BAD:
                body = dict(src)
                body[key] = BAD[p["type"]]
                n += expect(sim, "%s %s=%s" % (action, key, BAD[p["type"]]),
                            body, "InvalidParameterValue", key)
            for k, delta in (("min", -1), ("max", 1)):
                if k in p:
                    body = dict(src)
                    body[key] = str(p[k] + delta)
                    n += expect(sim, "%s %s=%s" % (action, key, body[key]),
                                body, "InvalidParameterValue", key)
            if p.get("required"):
                body = {k: v for k, v in base.items()
                        if pattern(k) != p["name"]}
                n += expect(sim, "%s without %s" % (action, p["name"]), body,
                            "MissingParameter")
            if p.get("required_in_item"):
                body = dict(src)
                del body[key]
                n += expect(sim, "%s without %s" % (action, key), body,
                            "MissingParameter", key)
        ok("%s: %d refusals with EC2's codes (misspelled names, bad values, "
           "missing required parameters)" % (action, n))
    base = bodies["DescribeAvailabilityZones"][0]
    body = {k: v for k, v in base.items() if k != "Version"}
    expect(sim, "no Version", body, "MissingParameter", "Version")
    body = dict(base, Version="2099-01-01")
    expect(sim, "Version 2099-01-01", body, "NoSuchVersion", "2099-01-01")
    body = {k: v for k, v in base.items() if k != "Action"}
    expect(sim, "no Action", body, "MissingAction")
    raw = "Action=DescribeAvailabilityZones&Version=2016-11-15" \
          "&ZoneName.1=ap-south-1a&ZoneName.1=ap-south-1b"
    expect(sim, "ZoneName.1 twice", raw, "InvalidQueryParameter", "ZoneName.1")
    raw = "Action=DescribeAvailabilityZones&Version=2016-11-15" \
          "&ZoneName.2=ap-south-1a"
    expect(sim, "ZoneName.2 without ZoneName.1", raw, "InvalidParameterValue",
           "ZoneName.1")
    ok("no Version, Version 2099-01-01, no Action, a parameter twice, a list "
       "with a gap: MissingParameter, NoSuchVersion, MissingAction, "
       "InvalidQueryParameter, InvalidParameterValue")


# ---- 4: the answers have what EC2's always have ----------------------------

# In EC2's samples only because those instances are paravirtual.
SAMPLE_ONLY = {"KernelId"}
# Members current EC2 returns for every VPC instance that the 2011-2013
# samples predate.
CURRENT = {"CpuOptions", "CapacityReservationSpecification",
           "HibernationOptions", "EnclaveOptions", "MetadataOptions",
           "MaintenanceOptions", "PrivateDnsNameOptions", "PlatformDetails",
           "UsageOperation", "UsageOperationUpdateTime", "EnaSupport",
           "NetworkInterfaces", "SecurityGroups", "SubnetId", "VpcId"}


def sample_members(model, data_dir):
    parser = botocore.parsers.create_parser("ec2")
    common = None
    for action, name in (("RunInstances", "botocore-ec2-run-instances.xml"),
                         ("DescribeInstances",
                          "botocore-ec2-describe-instances.xml")):
        with open(os.path.join(data_dir, name), "rb") as f:
            xml = f.read()
        parsed = parser.parse({"body": xml, "headers": {}, "status_code": 200},
                              model.operation_model(action).output_shape)
        for i in instances_of(parsed, action):
            common = set(i) if common is None else common & set(i)
    return common - SAMPLE_ONLY


def check_members(model, data_dir, seen):
    want = sample_members(model, data_dir) | CURRENT
    bad = 0
    for i in seen:
        missing = sorted(want - set(i))
        if missing:
            fail("instance %s lacks %s" % (i.get("InstanceId"), missing))
            bad += 1
        state = i.get("State", {})
        if "Code" not in state or "Name" not in state or \
           "AvailabilityZone" not in i.get("Placement", {}) or \
           "Tenancy" not in i.get("Placement", {}) or \
           "State" not in i.get("Monitoring", {}):
            fail("instance %s: state %r placement %r monitoring %r" % (
                i.get("InstanceId"), state, i.get("Placement"),
                i.get("Monitoring")))
            bad += 1
    if not seen:
        fail("no instance to look at")
    elif not bad:
        ok("%d instances parsed by botocore have all %d members of EC2's "
           "samples and current answers: %s"
           % (len(seen), len(want), ", ".join(sorted(want))))


# ---- STS -------------------------------------------------------------------

STS_ROLE = "arn:aws:iam::123456789012:role/gpuburst"


def chars_match(p, shape):
    """'' when [p]'s characters (letters, digits, _ and p["chars"]) are
    exactly those the model's pattern admits among printable ASCII."""
    pat = shape.metadata.get("pattern")
    if not pat:
        return "chars %r, the model has no pattern" % p["chars"]
    ours = set(p["chars"]) | set("abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
    for c in map(chr, range(0x20, 0x7f)):
        if bool(re.fullmatch(pat, c)) != (c in ours):
            return "%r: the model's pattern %s says %s" % (
                c, pat, "yes" if c not in ours else "no")
    return ""


def check_sts_static(sts, model):
    """The "sts" part of --dump-schema against botocore's STS model: names
    (the query serializer uses the member names), types, lengths, ranges,
    characters and required members."""
    if sts.get("version") != model.api_version:
        fail("the simulator's STS is %s, the model is %s"
             % (sts.get("version"), model.api_version))
    for action, params in sts["actions"].items():
        if action not in model.operation_names:
            fail("STS %s: no such operation in the model" % action)
            continue
        op = model.operation_model(action)
        members = op.input_shape.members if op.input_shape else {}
        bad = 0
        for p in params:
            shape = members.get(p["name"])
            if shape is None:
                fail("STS %s: %s is no member of the model" % (action, p["name"]))
                bad += 1
                continue
            why = compatible(p, shape)
            if not why and shape.type_name == "string":
                for k in ("min", "max"):
                    if p.get(k) != shape.metadata.get(k):
                        why = "length %s %s, the model's is %s" % (
                            k, p.get(k), shape.metadata.get(k))
                if not why and "chars" in p:
                    why = chars_match(p, shape)
            if why:
                fail("STS %s: %s: %s" % (action, p["name"], why))
                bad += 1
        required = op.input_shape.required_members if op.input_shape else []
        for member in required:
            if not any(p["name"] == member and p.get("required") for p in params):
                fail("STS %s: the model requires %s, the simulator does not"
                     % (action, member))
                bad += 1
        if not bad:
            ok("STS %s: %d parameters, all in the model with its types, "
               "lengths, ranges and characters; its required members required"
               % (action, len(params)))


def check_sts_calls(endpoint, model):
    """botocore's query serializer and SigV4 signer for "sts" against the
    simulator; botocore's query parser reads the answers."""
    ser = botocore.serialize.create_serializer("query", include_validation=True)
    parser = botocore.parsers.create_parser("query")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    creds = botocore.credentials.Credentials(AKID, SECRET)
    url = endpoint.rstrip("/") + "/"

    def call(action, params, sign=True, creds=creds):
        op = model.operation_model(action)
        body = ser.serialize_to_request(params, op)["body"]
        req = botocore.awsrequest.AWSRequest(
            method="POST", url=url, data=body,
            headers={"Content-Type":
                     "application/x-www-form-urlencoded; charset=utf-8"})
        if sign:
            botocore.auth.SigV4Auth(creds, "sts", REGION).add_auth(req)
        prep = req.prepare()
        data = prep.body if isinstance(prep.body, bytes) else prep.body.encode()
        r = urllib.request.Request(prep.url, data=data, method="POST",
                                   headers=dict(prep.headers))
        try:
            with opener.open(r, timeout=10) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        parsed = parser.parse({"status_code": status, "headers": {},
                               "body": raw}, op.output_shape)
        return status, parsed

    st, out = call("AssumeRole", {"RoleArn": STS_ROLE,
                                  "RoleSessionName": "schema-1",
                                  "DurationSeconds": 3600,
                                  "ExternalId": "not-asked-for"})
    cr = out.get("Credentials", {})
    if st != 200 or not isinstance(cr.get("Expiration"), datetime.datetime) or \
            not cr.get("AccessKeyId", "").startswith("ASIA") or \
            not cr.get("SessionToken") or \
            out.get("AssumedRoleUser", {}).get("Arn") != \
            "arn:aws:sts::123456789012:assumed-role/gpuburst/schema-1":
        fail("STS AssumeRole through botocore: %s %s" % (st, out))
        return
    session = botocore.credentials.Credentials(
        cr["AccessKeyId"], cr["SecretAccessKey"], cr["SessionToken"])
    st, who = call("GetCallerIdentity", {}, creds=session)
    if st != 200 or who.get("Arn") != out["AssumedRoleUser"]["Arn"]:
        fail("STS GetCallerIdentity with the session: %s %s" % (st, who))
    st, web = call("AssumeRoleWithWebIdentity", {
        "RoleArn": "arn:aws:iam::123456789012:role/gpuburst-web",
        "RoleSessionName": "schema-web",
        "WebIdentityToken":
            "eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl"},
        sign=False)
    if st != 200 or not isinstance(web.get("Credentials", {}).get("Expiration"),
                                   datetime.datetime) or not web.get("Provider"):
        fail("STS AssumeRoleWithWebIdentity through botocore: %s %s" % (st, web))
    st, bad = call("AssumeRole", {"RoleArn": STS_ROLE, "RoleSessionName": "x y"})
    if st != 400 or bad.get("Error", {}).get("Code") != "ValidationError":
        fail("STS: a RoleSessionName with a blank: %s %s" % (st, bad))
    if not [f for f in failures if f.startswith("STS")]:
        ok("STS: botocore's query serializer, signer and parser: AssumeRole "
           "(with an external id the role does not ask for), "
           "GetCallerIdentity with the session, AssumeRoleWithWebIdentity "
           "unsigned, ValidationError parsed")


def main():
    if len(sys.argv) != 4:
        print("usage: cloudsim_schema.py SCHEMA.json ENDPOINT DATA_DIR",
              file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    model = load_model()
    naming = botocore.serialize.EC2Serializer()
    if schema.get("version") != model.api_version:
        fail("the simulator speaks %s, the model is %s"
             % (schema.get("version"), model.api_version))
    check_static(schema, model, naming)
    sim = Sim(sys.argv[2], model)
    bodies, seen = run_all(sim)
    check_coverage(schema, bodies, sim.model)
    check_refusals(sim, schema, bodies)
    check_members(model, sys.argv[3], seen)
    sts_model = load_model("sts", "2011-06-15")
    check_sts_static(schema.get("sts", {"actions": {}}), sts_model)
    check_sts_calls(sys.argv[2], sts_model)
    for what in unchecked:
        print("# not checked: " + what)
    if failures:
        print("%d problem(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
