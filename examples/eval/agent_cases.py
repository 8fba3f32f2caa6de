# ruff: noqa: E501  (hand-written case text reads best one message a line)
"""Hand-written agent / tool-use cases: tool outputs referenced later, constraints, corrections, dumps."""

from __future__ import annotations

from typing import Any

from _dsl import chat, gold
from dumps import access_log, file_listing, json_rows, kubectl_pods, pip_install, pytest_run

AGENT = (
    "You are an operations agent with shell, HTTP and file tools. Act in small verified steps, cite tool "
    "output for every claim, and never run destructive commands without confirmation."
)
CODER = (
    "You are a coding agent working in the user's repository. Read before you edit, run the tests after "
    "every change, and keep diffs minimal."
)

CASES: list[dict[str, Any]] = [
    chat(
        "agent-crashloop",
        ["agent", "tool-use", "dump"],
        "Why is the checkout service crash-looping?",
        [
            ("system", AGENT),
            ("user", "checkout is flapping in prod-eu since the 14:05 deploy. Find out why."),
            (
                "call",
                "Listing the pods first.",
                [
                    (
                        "kubectl",
                        {"args": "get pods -n shop -l app=checkout"},
                        kubectl_pods("checkout", 24, "CrashLoopBackOff"),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "kubectl",
                        {"args": "logs checkout-7d9f8c6b5-m12x4 -n shop --previous --tail=20"},
                        gold(
                            "2025-03-14T14:07:12Z INFO starting checkout v2.31.0\n2025-03-14T14:07:13Z ERROR config: required env var PAYMENT_GATEWAY_URL is not set\n2025-03-14T14:07:13Z FATAL exiting with status 78"
                        ),
                    )
                ],
            ),
            (
                "call",
                "Checking what the deploy changed.",
                [
                    (
                        "git",
                        {"args": "diff v2.30.4..v2.31.0 -- deploy/checkout/values.yaml"},
                        gold(
                            "-  PAYMENT_GATEWAY_URL: https://pgw.internal.example.com\n+  PAYMENT_GATEWAY_ENDPOINT: https://pgw.internal.example.com"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "http_get",
                        {"url": "https://status.internal.example.com/api/incidents?service=checkout"},
                        json_rows("incident", 18),
                    )
                ],
            ),
            ("user", "So what's the cause, and what's the fix?"),
        ],
    ),
    chat(
        "agent-disk-full",
        ["agent", "tool-use", "constraint"],
        "Free up space on db-replica-2 now.",
        [
            ("system", AGENT),
            (
                "user",
                gold(
                    "db-replica-2 is at 97% disk. Important: do not touch anything under /var/lib/postgresql, the replica must keep replaying WAL."
                ),
            ),
            (
                "call",
                None,
                [
                    (
                        "ssh",
                        {"host": "db-replica-2", "cmd": "df -h /"},
                        "Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p1  500G  485G   15G  97% /",
                    )
                ],
            ),
            (
                "call",
                "Looking for the biggest directories.",
                [
                    (
                        "ssh",
                        {"host": "db-replica-2", "cmd": "du -xh / --max-depth=3 | sort -rh | head -8"},
                        gold(
                            "412G\t/var/lib/postgresql/16/main\n38G\t/var/log/postgresql\n21G\t/var/log/journal\n6.1G\t/usr\n2.2G\t/home/deploy/backups/old\n1.1G\t/opt/node_exporter"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "ssh",
                        {"host": "db-replica-2", "cmd": "ls -la /var/log/postgresql"},
                        file_listing(
                            "/var/log/postgresql",
                            [f"postgresql-2025-02-{d:02d}.log" for d in range(1, 29)]
                            + [f"postgresql-2025-03-{d:02d}.log" for d in range(1, 15)],
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "ssh",
                        {"host": "db-replica-2", "cmd": "journalctl --disk-usage"},
                        gold("Archived and active journals take up 20.8G in the file system."),
                    )
                ],
            ),
            ("user", "OK, go ahead and free up space now. What exactly will you run?"),
        ],
    ),
    chat(
        "agent-flaky-test",
        ["agent", "tool-use", "coding"],
        "Fix the flaky test.",
        [
            ("system", CODER),
            ("user", "test_invoice_due_date fails about one run in ten on CI. Can you fix it?"),
            (
                "call",
                None,
                [
                    (
                        "read_file",
                        {"path": "tests/test_invoices.py", "lines": "40-58"},
                        gold(
                            "def test_invoice_due_date():\n    invoice = make_invoice(issued=datetime.now())\n    assert invoice.due_date == (datetime.now() + timedelta(days=30)).date()"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "pytest tests/test_invoices.py -q"},
                        pytest_run(
                            "test_invoices.py",
                            [
                                f"test_invoice_{n}"
                                for n in (
                                    "totals",
                                    "tax",
                                    "currency",
                                    "rounding",
                                    "pdf",
                                    "email",
                                    "reminder",
                                    "credit_note",
                                    "discount",
                                    "vat_id",
                                    "lines",
                                    "export",
                                )
                            ],
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "grep",
                        {"pattern": "def make_invoice", "path": "src"},
                        gold(
                            "src/billing/invoices.py:88: def make_invoice(issued: datetime, terms_days: int = 30) -> Invoice:"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "read_file",
                        {"path": "src/billing/invoices.py", "lines": "88-96"},
                        gold(
                            "def make_invoice(issued: datetime, terms_days: int = 30) -> Invoice:\n    due = (issued.astimezone(UTC) + timedelta(days=terms_days)).date()\n    return Invoice(issued=issued, due_date=due)"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "pip install -e .[dev]"},
                        pip_install(
                            [
                                ("freezegun", "1.5.1"),
                                ("pytest", "8.2.1"),
                                ("pytest-cov", "5.0.0"),
                                ("hypothesis", "6.100.2"),
                                ("mypy", "1.10.0"),
                                ("ruff", "0.4.8"),
                            ]
                        ),
                    )
                ],
            ),
            ("user", "What's the root cause and what change do you propose?"),
        ],
    ),
    chat(
        "agent-api-rate-limit",
        ["agent", "tool-use", "correction"],
        "How many requests per minute can the sync job send?",
        [
            ("system", AGENT),
            (
                "user",
                "Our nightly CRM sync got 429s from the vendor API. Work out the rate limit we must respect.",
            ),
            (
                "call",
                None,
                [
                    (
                        "http_get",
                        {"url": "https://docs.crm-vendor.example.com/api/limits"},
                        "Rate limits: Standard plan, 600 requests per minute per API key. Burst: up to 50 requests per second for 5 seconds.",
                    )
                ],
            ),
            ("assistant", "The docs say 600 requests per minute on the Standard plan."),
            (
                "call",
                "Checking which plan we're actually on.",
                [
                    (
                        "http_get",
                        {"url": "https://api.crm-vendor.example.com/v2/account"},
                        gold(
                            '{"account": "acme-eu", "plan": "Starter", "limits": {"requests_per_minute": 120, "burst_per_second": 10}}'
                        ),
                    )
                ],
            ),
            (
                "assistant",
                gold(
                    "Correction: we're on the Starter plan, not Standard. The account endpoint reports 120 requests per minute and a burst of 10 per second."
                ),
            ),
            (
                "call",
                None,
                [
                    (
                        "read_file",
                        {"path": "/var/log/crm-sync/2025-03-13.log", "tail": 40},
                        access_log("/v2/contacts", 40, 429),
                    )
                ],
            ),
            ("user", "So how many requests per minute can the sync job send?"),
        ],
    ),
    chat(
        "agent-migration-order",
        ["agent", "tool-use", "constraint"],
        "Write the migration plan for the orders table.",
        [
            ("system", CODER),
            (
                "user",
                gold(
                    "We need to add a NOT NULL column `currency` to `orders` (200 million rows, Postgres 15). Hard requirement: no table rewrite and no lock longer than a second; checkout writes to this table all day."
                ),
            ),
            (
                "call",
                None,
                [
                    (
                        "psql",
                        {"query": "\\d orders"},
                        gold(
                            'Table "public.orders"\n id bigint not null\n customer_id bigint not null\n total_cents integer not null\n created_at timestamptz not null default now()\nIndexes: orders_pkey PRIMARY KEY (id), orders_customer_idx (customer_id)'
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [("psql", {"query": "select count(*) from orders"}, "  count\n-----------\n 201338442")],
            ),
            (
                "call",
                "Listing existing migrations.",
                [
                    (
                        "ls",
                        {"path": "db/migrations"},
                        file_listing(
                            "db/migrations",
                            [
                                f"2024{m:02d}{d:02d}_{name}.sql"
                                for m, d, name in [
                                    (1, 4, "create_customers"),
                                    (1, 9, "create_orders"),
                                    (2, 2, "orders_customer_idx"),
                                    (3, 15, "add_refunds"),
                                    (4, 1, "invoices"),
                                    (5, 20, "tax_rates"),
                                    (6, 3, "shipments"),
                                    (7, 7, "returns"),
                                    (8, 12, "coupons"),
                                    (9, 30, "loyalty"),
                                    (10, 2, "gift_cards"),
                                    (11, 19, "audit_log"),
                                ]
                            ],
                        ),
                    )
                ],
            ),
            ("user", "Write the migration plan for the orders table."),
        ],
    ),
    chat(
        "agent-cert-expiry",
        ["agent", "tool-use", "dump"],
        "Which certificates expire this month and where are they used?",
        [
            ("system", AGENT),
            (
                "user",
                "Security asked which TLS certificates expire before the end of March. Check our load balancers.",
            ),
            (
                "call",
                None,
                [("aws", {"args": "acm list-certificates --region eu-west-1"}, json_rows("cert", 22))],
            ),
            (
                "call",
                "Checking expiry of the ones attached to listeners.",
                [
                    (
                        "aws",
                        {
                            "args": "acm describe-certificate --certificate-arn arn:aws:acm:eu-west-1:123:certificate/9f2c"
                        },
                        gold(
                            '{"DomainName": "api.example.com", "NotAfter": "2025-03-27T23:59:59Z", "InUseBy": ["arn:aws:elasticloadbalancing:eu-west-1:123:loadbalancer/app/api-prod/4d1e"], "RenewalEligibility": "INELIGIBLE", "Type": "IMPORTED"}'
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "aws",
                        {
                            "args": "acm describe-certificate --certificate-arn arn:aws:acm:eu-west-1:123:certificate/11ab"
                        },
                        '{"DomainName": "www.example.com", "NotAfter": "2025-09-02T23:59:59Z", "InUseBy": ["arn:aws:cloudfront::123:distribution/E2ABC"], "RenewalEligibility": "ELIGIBLE", "Type": "AMAZON_ISSUED"}',
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "aws",
                        {
                            "args": "acm describe-certificate --certificate-arn arn:aws:acm:eu-west-1:123:certificate/c0de"
                        },
                        gold(
                            '{"DomainName": "partners.example.com", "NotAfter": "2025-03-19T12:00:00Z", "InUseBy": ["arn:aws:elasticloadbalancing:eu-west-1:123:loadbalancer/app/partner-gw/77aa"], "RenewalEligibility": "INELIGIBLE", "Type": "IMPORTED"}'
                        ),
                    )
                ],
            ),
            ("call", None, [("aws", {"args": "elbv2 describe-load-balancers"}, json_rows("lb", 14))]),
            ("user", "Summarise: which certificates expire this month, and where are they used?"),
        ],
    ),
    chat(
        "agent-dependency-cve",
        ["agent", "tool-use", "coding"],
        "Are we affected by the urllib3 advisory, and what should we pin?",
        [
            ("system", CODER),
            (
                "user",
                "An advisory says urllib3 below 2.2.2 leaks the Proxy-Authorization header on cross-origin redirects. Are we affected?",
            ),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "pip show urllib3"},
                        gold("Name: urllib3\nVersion: 2.0.7\nRequired-by: requests, botocore"),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "pip install --dry-run urllib3==2.2.2"},
                        pip_install(
                            [
                                ("urllib3", "2.2.2"),
                                ("requests", "2.32.3"),
                                ("certifi", "2024.6.2"),
                                ("idna", "3.7"),
                                ("charset-normalizer", "3.3.2"),
                            ]
                        ),
                    )
                ],
            ),
            (
                "call",
                "Checking whether botocore allows it.",
                [
                    (
                        "run",
                        {
                            "cmd": "pip show botocore | grep Requires; grep urllib3 $(python -c 'import botocore,os;print(os.path.dirname(botocore.__file__))')/../botocore-*.dist-info/METADATA"
                        },
                        gold(
                            'Requires: jmespath, python-dateutil, urllib3\nRequires-Dist: urllib3 (<1.27,>=1.25.4) ; python_version < "3.10"\nRequires-Dist: urllib3 (!=2.2.0,<3,>=1.25.4) ; python_version >= "3.10"'
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "grep",
                        {"pattern": "proxies=", "path": "src"},
                        gold(
                            "src/integrations/partner_client.py:41:        self.session.proxies = {'https': settings.PARTNER_PROXY_URL}"
                        ),
                    )
                ],
            ),
            ("user", "Are we affected, and what should we pin?"),
        ],
    ),
    chat(
        "agent-anthropic-incident",
        ["agent", "tool-use", "anthropic"],
        "Post the incident summary.",
        [
            ("system", AGENT),
            (
                "user",
                "The login page was returning 502s for about 20 minutes this morning. Put together what happened.",
            ),
            (
                "call",
                "Pulling the alert timeline.",
                [
                    (
                        "pagerduty_incidents",
                        {"since": "2025-03-14T06:00:00Z"},
                        gold(
                            "INC-4412 triggered 07:02:11Z 'auth-web 5xx > 5%'; acknowledged 07:04 by m.keller; resolved 07:23:40Z."
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "query_logs",
                        {"service": "auth-web", "from": "07:00", "to": "07:25", "level": "error"},
                        gold(
                            "07:01:58Z upstream connect error: auth-api:8443 connection refused (x4811)\n07:02:03Z pool exhausted: 0/64 healthy backends"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "query_logs",
                        {"service": "auth-api", "from": "06:55", "to": "07:05"},
                        gold(
                            "06:59:40Z received SIGTERM from kubelet: node drained for kernel patching\n07:00:02Z readiness probe failed: migrations pending (schema 212 < 214)"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "http_get",
                        {"url": "https://grafana.internal/api/dashboards/uid/auth/panels"},
                        json_rows("panel", 16),
                    )
                ],
            ),
            ("user", "Post the incident summary: timeline, cause, and follow-ups."),
        ],
        provider="anthropic",
    ),
    chat(
        "agent-feature-flag",
        ["agent", "tool-use", "correction"],
        "Is the new pricing page live for users in Canada?",
        [
            ("system", AGENT),
            ("user", "Product wants to know if the new pricing page is live for Canadian users."),
            (
                "call",
                None,
                [
                    (
                        "flags_get",
                        {"flag": "pricing_page_v2"},
                        '{"flag": "pricing_page_v2", "enabled": true, "rollout": {"US": 100, "CA": 0, "GB": 50}, "updated": "2025-03-10T16:02:00Z"}',
                    )
                ],
            ),
            (
                "assistant",
                "As of 10 March the flag is enabled for the US at 100%, GB at 50% and Canada at 0%.",
            ),
            (
                "call",
                "Checking the audit log for later changes.",
                [
                    (
                        "flags_audit",
                        {"flag": "pricing_page_v2", "limit": 5},
                        gold(
                            "2025-03-13T09:15:22Z j.ortiz set rollout.CA 0 -> 100 (ticket GROW-311)\n2025-03-12T11:40:05Z j.ortiz set rollout.GB 25 -> 50"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "http_get",
                        {"url": "https://www.example.com/pricing", "headers": {"CF-IPCountry": "CA"}},
                        gold(
                            "HTTP/2 200\nx-variant: pricing_page_v2\n<title>Pricing - plans for every team</title>"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "query_logs",
                        {"service": "web", "path": "/pricing", "limit": 35},
                        access_log("/pricing", 35),
                    )
                ],
            ),
            ("user", "So, is it live in Canada?"),
        ],
    ),
    chat(
        "agent-data-export",
        ["agent", "tool-use", "constraint"],
        "Export the customer list for the auditors.",
        [
            ("system", AGENT),
            (
                "user",
                gold(
                    "The auditors need a CSV of all customers created in 2024. GDPR: the export must not contain email addresses or phone numbers, only customer id, country, created date and plan."
                ),
            ),
            (
                "call",
                None,
                [
                    (
                        "psql",
                        {"query": "\\d customers"},
                        gold(
                            "id uuid, email text, phone text, full_name text, country char(2), plan text, created_at timestamptz, deleted_at timestamptz"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "psql",
                        {
                            "query": "select count(*) from customers where created_at >= '2024-01-01' and created_at < '2025-01-01'"
                        },
                        "count\n-------\n 48213",
                    )
                ],
            ),
            (
                "call",
                "A quick look at some rows.",
                [
                    (
                        "psql",
                        {"query": "select id, country, plan, created_at from customers limit 30"},
                        json_rows("cus", 30),
                    )
                ],
            ),
            ("user", gold("Oh, and they said to leave out customers that were deleted.")),
            ("assistant", "Understood."),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "ls -la /srv/exports"},
                        file_listing(
                            "/srv/exports", [f"export_2025-02-{d:02d}.csv.gz" for d in range(1, 25)]
                        ),
                    )
                ],
            ),
            ("user", "Write the export query and command."),
        ],
    ),
    chat(
        "agent-refactor-signature",
        ["agent", "tool-use", "coding"],
        "Update every caller of send_receipt.",
        [
            ("system", CODER),
            (
                "user",
                "I changed send_receipt to take a Receipt object instead of order_id and email. Update all callers.",
            ),
            (
                "call",
                None,
                [
                    (
                        "read_file",
                        {"path": "src/mail/receipts.py", "lines": "1-20"},
                        gold(
                            "@dataclass(frozen=True)\nclass Receipt:\n    order_id: str\n    email: str\n    locale: str = 'en'\n\ndef send_receipt(receipt: Receipt) -> None:\n    ..."
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "grep",
                        {"pattern": "send_receipt(", "path": "src"},
                        gold(
                            "src/checkout/complete.py:77:    send_receipt(order.id, order.customer.email)\nsrc/admin/resend.py:31:    send_receipt(order_id=oid, email=addr)\nsrc/jobs/backfill.py:54:        send_receipt(row['order_id'], row['email'])"
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "run",
                        {"cmd": "pytest -q"},
                        pytest_run(
                            "test_mail.py",
                            [
                                f"test_{n}"
                                for n in (
                                    "render_en",
                                    "render_de",
                                    "render_fr",
                                    "attachments",
                                    "bcc",
                                    "reply_to",
                                    "unsubscribe",
                                    "bounce",
                                    "retry",
                                    "dkim",
                                    "templates",
                                    "preview",
                                    "plain_text",
                                    "html",
                                )
                            ],
                            "test_resend_admin",
                        ),
                    )
                ],
            ),
            (
                "call",
                None,
                [
                    (
                        "read_file",
                        {"path": "src/admin/resend.py", "lines": "20-35"},
                        gold(
                            "def resend(oid: str, addr: str, locale: str) -> None:\n    audit('resend', oid)\n    send_receipt(order_id=oid, email=addr)"
                        ),
                    )
                ],
            ),
            ("user", "Show me the edits for every caller."),
        ],
    ),
    chat(
        "agent-cost-spike",
        ["agent", "tool-use", "dump"],
        "What caused the cloud cost spike?",
        [
            ("system", AGENT),
            ("user", "Our AWS bill jumped 40% in February. Find out why."),
            (
                "call",
                None,
                [
                    (
                        "aws",
                        {"args": "ce get-cost-and-usage --granularity MONTHLY --group-by SERVICE"},
                        gold(
                            "January: EC2 41,200 USD; S3 6,100; NAT Gateway 2,300; RDS 9,800\nFebruary: EC2 42,900 USD; S3 6,400; NAT Gateway 21,700; RDS 9,900"
                        ),
                    )
                ],
            ),
            (
                "call",
                "NAT Gateway is the outlier. Checking traffic by source.",
                [
                    (
                        "aws",
                        {"args": "logs insights vpc-flow --query 'top talkers via nat-0a1b'"},
                        gold(
                            "10.20.3.41 (ip-10-20-3-41, asg batch-etl) -> s3.eu-west-1 endpoint via NAT: 182 TB\n10.20.1.12 -> api.stripe.com: 0.2 TB"
                        ),
                    )
                ],
            ),
            ("call", None, [("aws", {"args": "ec2 describe-vpc-endpoints"}, gold('{"VpcEndpoints": []}'))]),
            (
                "call",
                None,
                [
                    (
                        "aws",
                        {"args": "ec2 describe-instances --filters Name=tag:team,Values=data"},
                        json_rows("i", 26),
                    )
                ],
            ),
            ("user", "Explain the spike and what to change."),
        ],
    ),
]
