"""Schemathesis hooks for the contract test (services/api/test/contract.test.ts).

The OpenAPI document declares every rule JSON Schema can express (lengths, patterns, minLength 1 on cursors...).
The rules it cannot carry in a schema (they relate two values or depend on what is stored) are listed, each with
the operations it applies to, in rules-beyond-schema.json; each operation's description states them, and
contract-rules.test.ts checks that and that breaking one gets 400. For *positive* cases only, these hooks make
generated requests obey exactly those rules, on exactly those operations, so that "schema-valid request refused"
means a real disagreement; a fixer without a listed rule, or a listed rule without a fixer, stops the run.
Negative cases are never touched. Besides the rules, positive lead-count requests name the partner's own office
and organization (any other is a 404, which is not a refusal), and every request carrying a valid Idempotency-Key
gets a fresh one. The contract test creates CONTRACT_BROKER_ID first.
"""

import json
import os
import re
import uuid
from datetime import datetime

import schemathesis

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules-beyond-schema.json"), encoding="utf-8") as f:
    RULES = {r["rule"]: set(r["operations"]) for r in json.load(f)["rules"]}

CONTRACT_BROKER_ID = os.environ.get("CONTRACT_BROKER_ID", "contract-broker")
# The partner's own office and organization: without them every positive lead-count request would be a 404.
KNOWN_IDS = {"officeId": os.environ.get("CONTRACT_OFFICE_ID"), "organizationId": os.environ.get("CONTRACT_ORGANIZATION_ID")}
LEAD_COUNTS = ("/partner/v1/offices/{officeId}/leads/count", "/partner/v1/organizations/{organizationId}/leads/count")
DEFAULT_LOCATION = {"city": "Austin", "state": "TX", "country": "US", "visibility": "SHOW_CITY_STATE"}


def _is_positive(case) -> bool:
    meta = getattr(case, "meta", None)
    mode = getattr(getattr(meta, "generation", None), "mode", None)
    return mode is not None and str(getattr(mode, "value", mode)) == "positive"


def _instant(value: str):
    try:
        return datetime.fromisoformat(value.strip(JS_WHITESPACE).replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None


# What JavaScript's String.prototype.trim() removes (Python's str.strip() differs, e.g. on U+FEFF).
JS_WHITESPACE = "\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _price(value):
    text = str(value).strip(JS_WHITESPACE)
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _applies(rule: str, case) -> bool:
    return f"{case.operation.method.upper()} {case.operation.path}" in RULES[rule]


def _cursor_as_handed_out(case, query, body):
    # A cursor is only ever valid as the nextCursor the server handed out; a generated one is refused (400).
    if query is not None:
        query.pop("cursor", None)


def _start_not_after_end(case, query, body):
    if query and isinstance(query.get("startDate"), str) and isinstance(query.get("endDate"), str):
        start, end = _instant(query["startDate"]), _instant(query["endDate"])
        if start is not None and end is not None and start > end:
            query["startDate"], query["endDate"] = query["endDate"], query["startDate"]


def _min_not_above_max(case, query, body):
    for low_name, high_name in (("minPrice", "maxPrice"), ("minRevenue", "maxRevenue"), ("minSde", "maxSde")):
        if query and low_name in query and high_name in query:
            low, high = _price(query[low_name]), _price(query[high_name])
            if low is not None and high is not None and low > high:
                query[low_name], query[high_name] = query[high_name], query[low_name]


def _listing_create_requires(case, query, body):
    # Generated IDs are new, so every PUT is a create: it carries the required parts.
    if not isinstance(body, dict):
        return
    if not isinstance(body.get("broker"), dict) and "brokerExternalId" not in body:
        body["brokerExternalId"] = CONTRACT_BROKER_ID
    body.setdefault("status", "FOR_SALE")
    body.setdefault("businessType", "Retail")
    location = body.get("location")
    if not isinstance(location, dict):
        body["location"] = dict(DEFAULT_LOCATION)
    else:
        for key, value in DEFAULT_LOCATION.items():
            location.setdefault(key, value)


def _broker_ids_equal(case, query, body):
    if isinstance(body, dict) and isinstance(body.get("broker"), dict) and "brokerExternalId" in body:
        body["brokerExternalId"] = body["broker"].get("externalBrokerId")


def _unique_photo_urls(case, query, body):
    photos = body.get("photos") if isinstance(body, dict) else None
    if isinstance(photos, list):
        seen = set()
        body["photos"] = [p for p in photos if not (isinstance(p, dict) and (p.get("url") in seen or seen.add(p.get("url"))))]


def _endpoint_create_requires(case, query, body):
    if isinstance(body, dict):
        body.setdefault("url", "https://hooks.example.com/pss")
        body.setdefault("events", ["listing.published"])


def _batch_ids_unique(id_name):
    def fix(case, query, body):
        # A batch names each external ID once (400 for the whole batch otherwise): later repeats are dropped.
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            return
        seen = set()
        kept = []
        for item in body["items"]:
            key = item.get(id_name) if isinstance(item, dict) else None
            if isinstance(key, str) and key in seen:
                continue
            if isinstance(key, str):
                seen.add(key)
            kept.append(item)
        body["items"] = kept

    return fix


def _replay_range_forwards(case, query, body):
    # throughSequence above afterSequence, until after since.
    if not isinstance(body, dict):
        return
    after, through = body.get("afterSequence"), body.get("throughSequence")
    if isinstance(after, (int, float)) and isinstance(through, (int, float)) and through <= after:
        if after + 1 <= 2**53 - 1:
            body["throughSequence"] = int(after) + 1
        else:
            body.pop("throughSequence")
    if isinstance(body.get("since"), str) and isinstance(body.get("until"), str):
        since, until = _instant(body["since"]), _instant(body["until"])
        if since is not None and until is not None and until <= since:
            body.pop("until")


# In this order: the broker IDs are made equal after a create's default broker is set.
FIXERS = {
    "cursor-as-handed-out": _cursor_as_handed_out,
    "start-not-after-end": _start_not_after_end,
    "min-not-above-max": _min_not_above_max,
    "listing-create-requires": _listing_create_requires,
    "broker-ids-equal": _broker_ids_equal,
    "unique-photo-urls": _unique_photo_urls,
    "endpoint-create-requires": _endpoint_create_requires,
    "batch-listing-ids-unique": _batch_ids_unique("externalListingId"),
    "batch-broker-ids-unique": _batch_ids_unique("externalBrokerId"),
    "replay-range-forwards": _replay_range_forwards,
}
if set(FIXERS) != set(RULES):
    raise RuntimeError(f"schemathesis_hooks.py and rules-beyond-schema.json disagree: fixers {sorted(FIXERS)}, rules {sorted(RULES)}")


VALID_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def _fresh_idempotency_key(case):
    # Each generated request is a new one, so a valid key becomes a key of its own: the fuzzer reuses generated
    # values, and the same Idempotency-Key with another request is refused (422) by design (docs/partner-api.md,
    # "Idempotency-Key"; services/api/test/idempotency-key.test.ts holds the API to that rule). An invalid key (the
    # negative part of a case) is left as it is.
    if case.headers is not None:  # a CaseInsensitiveDict
        for name, value in list(case.headers.items()):
            if name.lower() == "idempotency-key" and isinstance(value, str) and VALID_KEY.match(value.strip('"')):
                case.headers[name] = str(uuid.uuid4())


@schemathesis.hook
def map_case(context, case):
    _fresh_idempotency_key(case)
    if not _is_positive(case):
        return case
    path = case.operation.path
    query = case.query if isinstance(case.query, dict) else None


    if path in LEAD_COUNTS and isinstance(case.path_parameters, dict):
        for name, value in KNOWN_IDS.items():
            if value and name in case.path_parameters:
                case.path_parameters[name] = value

    for rule, fix in FIXERS.items():
        if _applies(rule, case):
            fix(case, query, case.body)
    return case
