#!/usr/bin/env python3
"""Generate a large batch of metrics for flagdesk's metrics tool (standard library only).

    python app/resources/samples/generate.py --metrics 1000000 --out /tmp/m1m.ndjson
    python app/resources/samples/generate.py --metrics 50000 --format bulk --seed 7 > batch.json

The features and applications are those of the sandbox's demo data, so an upload to a demo
sandbox counts them all. Every metric has yes + no > 0 and a timestamp (integer milliseconds)
at the start of one of the last `--hours` one-hour windows before `--start`. The same --seed
and --start give the same bytes; --start defaults to the start of the current hour.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from typing import TextIO

HOUR_MS = 3_600_000
#: flags of the sandbox's demo data that are not archived
FEATURES = [
    "billing-beta", "billing-fast-path", "billing-rollout", "cart-ab-test", "cart-beta", "cart-v2",
    "checkout-kill-switch", "checkout-limits", "checkout-redesign", "checkout-v2",
    "coupons-fast-path", "coupons-limits", "coupons-rollout", "invoices-cache",
    "invoices-fast-path", "invoices-kill-switch", "invoices-limits", "invoices-v2",
    "loyalty-cache", "loyalty-rollout", "notifications-beta", "notifications-v2",
    "onboarding-redesign", "onboarding-rollout", "onboarding-v2", "profile-banner",
    "profile-beta", "recommendations-beta", "recommendations-limits", "recommendations-redesign",
    "refunds-ab-test", "refunds-kill-switch", "refunds-redesign", "reviews-ab-test",
    "reviews-redesign", "reviews-v2", "search-banner", "search-fast-path", "shipping-fast-path",
    "shipping-limits", "shipping-v2", "wishlist-ab-test", "wishlist-beta", "wishlist-fast-path",
    "wishlist-redesign",
]  # fmt: skip
#: the demo data's applications
APPS = ["web-frontend", "checkout-service", "search-api", "mobile-ios", "mobile-android"]


def metric_lines(
    n: int, rng: random.Random, start: int, hours: int, envs: list[str]
) -> Iterator[str]:
    """Yield `n` metric items, one compact JSON object each."""
    features = [json.dumps(f) for f in FEATURES]
    apps = [json.dumps(a) for a in APPS]
    environments = [json.dumps(e) for e in envs]
    windows = [start - (h + 1) * HOUR_MS for h in range(hours)]
    pick = rng.randrange
    for _ in range(n):
        yes = pick(500)
        no = pick(200) if yes else 1 + pick(200)
        line = (
            f'{{"featureName":{features[pick(len(features))]},'
            f'"appName":{apps[pick(len(apps))]},'
            f'"environment":{environments[pick(len(environments))]},'
            f'"timestamp":{windows[pick(hours)]},"yes":{yes},"no":{no}'
        )
        if yes and pick(5) == 0:
            blue = pick(yes + 1)
            line += f',"variants":{{"blue":{blue},"green":{yes - blue}}}'
        yield line + "}"


def application_lines(start: int, hours: int, envs: list[str]) -> list[str]:
    started = start - (hours + 1) * HOUR_MS
    return [
        json.dumps(
            {
                "appName": app,
                "environment": env,
                "instanceId": f"{app}-1",
                "interval": 15,
                "started": started,
                "sdkVersion": "unleash-client-node:6.1.0",
                "strategies": ["default", "flexibleRollout"],
            },
            separators=(",", ":"),
        )
        for app in APPS
        for env in envs
    ]


def write(out: TextIO, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    envs = args.environments.split(",")
    lines = metric_lines(args.metrics, rng, args.start, args.hours, envs)
    if args.format == "ndjson":
        for line in lines:
            out.write(line)
            out.write("\n")
        return
    if args.format == "bulk":
        out.write('{"applications":[\n')
        out.write(",\n".join(application_lines(args.start, args.hours, envs)))
        out.write('\n],\n"metrics":[\n')
    else:
        out.write("[\n")
    first = True
    for line in lines:
        if not first:
            out.write(",\n")
        out.write(line)
        first = False
    out.write("\n]}\n" if args.format == "bulk" else "\n]\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", type=int, required=True, help="how many metric items")
    parser.add_argument("--format", choices=["ndjson", "bulk", "array"], default="ndjson")
    parser.add_argument("--out", help="file to write (default: standard output)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--start",
        type=int,
        default=int(time.time() * 1000) // HOUR_MS * HOUR_MS,
        help="milliseconds since the epoch; windows are the --hours before it "
        "(default: the start of the current hour)",
    )
    parser.add_argument("--hours", type=int, default=24, help="one-hour windows (default 24)")
    parser.add_argument(
        "--environments",
        default="development",
        help="comma-separated environments (default: development, the environment of the "
        "sandbox's client token)",
    )
    args = parser.parse_args(argv)
    if args.metrics < 0 or args.hours < 1:
        parser.error("--metrics must be 0 or more and --hours 1 or more")
    if args.out:
        with open(args.out, "w", encoding="utf-8", newline="\n") as out:
            write(out, args)
    else:
        write(sys.stdout, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
