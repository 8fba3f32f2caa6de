# ruff: noqa: E501  (hand-written case text reads best one message a line)
"""Hand-written code-review cases: diff hunks, review threads, CI output and surrounding code."""

from __future__ import annotations

from typing import Any

from _dsl import gold, items
from dumps import pip_install, pytest_run

SYSTEM = "You are reviewing a pull request. Be specific: cite file and line, and separate blocking issues from suggestions."


def review(case_id: str, tags: list[str], question: str, parts: list[tuple[Any, ...]]) -> dict[str, Any]:
    """parts: (id, kind, priority or None, minute offset, text). Kinds: hunk, file, comment, ci, desc."""
    kinds = {
        "hunk": "Document",
        "file": "Document",
        "comment": "Message",
        "ci": "ToolOutput",
        "desc": "Message",
    }
    entries: list[dict[str, Any]] = [
        {"id": "system", "content": SYSTEM, "kind": "SystemPrompt", "pinned": True}
    ]
    for part_id, kind, priority, minute, text in parts:
        entry: dict[str, Any] = {
            "id": part_id,
            "content": text,
            "kind": kinds[kind],
            "source": "Tool" if kind == "ci" else "Chat" if kind in ("comment", "desc") else "Repo",
            "ts": f"2025-03-14T{10 + minute // 60:02d}:{minute % 60:02d}:00Z",
            "tags": [kind],
        }
        if priority is not None:
            entry["priority"] = priority
        entries.append(entry)
    entries.append(
        {
            "id": "question",
            "content": question,
            "kind": "Message",
            "pinned": True,
            "ts": "2025-03-14T18:00:00Z",
        }
    )
    return items(case_id, ["code-review", *tags], question, entries)


CASES: list[dict[str, Any]] = [
    review(
        "review-sql-injection",
        ["security"],
        "Is this PR safe to merge?",
        [
            ("desc", "desc", 2, 0, "PR #412: Add search by customer name to the admin panel."),
            (
                "hunk-search",
                "hunk",
                3,
                1,
                gold(
                    "src/admin/search.py @@ -10,6 +10,12 @@\n+def search_customers(db, name):\n+    query = f\"SELECT id, name, email FROM customers WHERE name LIKE '%{name}%'\"\n+    return db.execute(query).fetchall()"
                ),
            ),
            (
                "hunk-view",
                "hunk",
                3,
                2,
                gold(
                    "src/admin/views.py @@ -40,3 +40,7 @@\n+@route('/admin/search')\n+def search(request):\n+    return render('search.html', rows=search_customers(db, request.args['q']))"
                ),
            ),
            (
                "hunk-template",
                "hunk",
                2,
                3,
                "templates/search.html @@ -0,0 +1,9 @@\n+<table>{% for row in rows %}<tr><td>{{ row.name }}</td><td>{{ row.email }}</td></tr>{% endfor %}</table>",
            ),
            (
                "ci",
                "ci",
                1,
                20,
                pytest_run(
                    "test_admin.py",
                    [
                        f"test_admin_{n}"
                        for n in (
                            "login",
                            "logout",
                            "list",
                            "detail",
                            "export",
                            "audit",
                            "roles",
                            "search_page",
                        )
                    ],
                ),
            ),
            ("c-style", "comment", 1, 30, "reviewer-b: nit: the template could use the shared table macro."),
            (
                "file-db",
                "file",
                1,
                4,
                "src/db.py: execute(sql, params=()) runs a parameterised statement; pass params as a tuple and use ? placeholders.",
            ),
            ("c-approve", "comment", 1, 45, "reviewer-b: looks fine otherwise, approving after the nit."),
        ],
    ),
    review(
        "review-migration-lock",
        ["database"],
        "What must change before this migration can run in production?",
        [
            ("desc", "desc", 2, 0, "PR #977: index orders by status for the new fulfilment dashboard."),
            (
                "hunk-mig",
                "hunk",
                3,
                1,
                gold(
                    "db/migrations/0142_orders_status_idx.py @@ +1,8 @@\n+class Migration(migrations.Migration):\n+    operations = [\n+        migrations.AddIndex('order', models.Index(fields=['status'], name='orders_status_idx')),\n+    ]"
                ),
            ),
            (
                "c-dba",
                "comment",
                2,
                50,
                gold(
                    "dba-team: orders has 200M rows. A plain CREATE INDEX blocks writes for the whole build (about 25 minutes). Use AddIndexConcurrently with atomic = False."
                ),
            ),
            (
                "hunk-dash",
                "hunk",
                2,
                2,
                "src/fulfilment/dashboard.py @@ -5,2 +5,6 @@\n+def pending_orders():\n+    return Order.objects.filter(status='pending').order_by('created_at')[:500]",
            ),
            (
                "ci",
                "ci",
                1,
                20,
                pip_install(
                    [
                        ("django", "5.0.6"),
                        ("psycopg", "3.1.19"),
                        ("django-extensions", "3.2.3"),
                        ("gunicorn", "22.0.0"),
                    ]
                ),
            ),
            (
                "c-naming",
                "comment",
                1,
                35,
                "reviewer-c: could the dashboard function live in selectors.py like the others?",
            ),
            (
                "file-settings",
                "file",
                1,
                3,
                "settings/db.py: DATABASES['default']['OPTIONS'] = {'options': '-c statement_timeout=30000'}",
            ),
        ],
    ),
    review(
        "review-race-condition",
        ["concurrency"],
        "Is the new counter update correct under concurrent requests?",
        [
            ("desc", "desc", 2, 0, "PR #233: count article views."),
            (
                "hunk-views",
                "hunk",
                3,
                1,
                gold(
                    "src/articles/views.py @@ -22,4 +22,8 @@\n+    article = Article.objects.get(pk=pk)\n+    article.view_count = article.view_count + 1\n+    article.save(update_fields=['view_count'])"
                ),
            ),
            (
                "file-settings",
                "file",
                1,
                2,
                gold(
                    "deploy/gunicorn.conf.py: workers = 8; threads = 4  # 32 concurrent requests per pod, 6 pods"
                ),
            ),
            ("c-perf", "comment", 1, 40, "reviewer-a: the extra query per view is fine, the table is small."),
            (
                "ci",
                "ci",
                1,
                25,
                pytest_run(
                    "test_articles.py",
                    [
                        f"test_article_{n}"
                        for n in (
                            "create",
                            "edit",
                            "publish",
                            "unpublish",
                            "slug",
                            "tags",
                            "feed",
                            "views_increment",
                        )
                    ],
                ),
            ),
            (
                "hunk-model",
                "hunk",
                2,
                3,
                "src/articles/models.py @@ -12,2 +12,3 @@\n+    view_count = models.PositiveIntegerField(default=0)",
            ),
        ],
    ),
    review(
        "review-api-breaking",
        ["api"],
        "Does this PR break existing API clients?",
        [
            ("desc", "desc", 2, 0, "PR #1290: rename `amount` to `amount_cents` for clarity."),
            (
                "hunk-serializer",
                "hunk",
                3,
                1,
                gold(
                    "src/api/serializers.py @@ -31,7 +31,7 @@\n-    amount = serializers.IntegerField()\n+    amount_cents = serializers.IntegerField()"
                ),
            ),
            (
                "file-versioning",
                "file",
                2,
                2,
                gold(
                    "docs/api-versioning.md: Public API v1 is frozen. Field renames or removals require a new version (v2) and at least six months of overlap."
                ),
            ),
            (
                "hunk-tests",
                "hunk",
                2,
                3,
                "tests/api/test_payments.py @@ -50,3 +50,3 @@\n-    assert body['amount'] == 1999\n+    assert body['amount_cents'] == 1999",
            ),
            (
                "ci",
                "ci",
                1,
                22,
                pytest_run(
                    "api/test_payments.py",
                    [
                        f"test_payment_{n}"
                        for n in (
                            "create",
                            "list",
                            "refund",
                            "partial_refund",
                            "currency",
                            "idempotency",
                            "webhook",
                            "metadata",
                            "search",
                        )
                    ],
                ),
            ),
            ("c-lgtm", "comment", 1, 30, "reviewer-d: much clearer name, LGTM."),
            (
                "c-mobile",
                "comment",
                2,
                55,
                gold(
                    "mobile-team: the iOS app 4.x still reads `amount` from /v1/payments; 30% of users haven't updated."
                ),
            ),
        ],
    ),
    review(
        "review-secrets-log",
        ["security", "logging"],
        "Any blocking issues in this logging change?",
        [
            ("desc", "desc", 2, 0, "PR #88: log outgoing HTTP requests for debugging partner integrations."),
            (
                "hunk-client",
                "hunk",
                3,
                1,
                gold(
                    "src/partners/client.py @@ -18,3 +18,5 @@\n+        logger.info('partner request %s %s headers=%s', method, url, dict(headers))\n+        return self.session.request(method, url, headers=headers, **kwargs)"
                ),
            ),
            (
                "file-auth",
                "file",
                2,
                2,
                gold(
                    "src/partners/auth.py: headers['Authorization'] = f'Bearer {settings.PARTNER_API_TOKEN}' is added to every partner request."
                ),
            ),
            (
                "file-logging",
                "file",
                1,
                3,
                "settings/logging.py: INFO logs are shipped to the shared Datadog index (retention 30 days, readable by all engineers).",
            ),
            (
                "ci",
                "ci",
                1,
                20,
                pytest_run(
                    "test_partners.py",
                    [
                        f"test_partner_{n}"
                        for n in ("auth", "retry", "timeout", "pagination", "errors", "webhooks", "signature")
                    ],
                ),
            ),
            ("c-nice", "comment", 1, 40, "reviewer-e: this will save us so much time on partner tickets!"),
        ],
    ),
    review(
        "review-timezone-bug",
        ["correctness"],
        "Will the daily report include the right orders?",
        [
            ("desc", "desc", 2, 0, "PR #640: daily sales report email at 07:00 Europe/Berlin."),
            (
                "hunk-report",
                "hunk",
                3,
                1,
                gold(
                    "src/reports/daily.py @@ -1,5 +1,9 @@\n+def yesterday_orders():\n+    start = datetime.combine(date.today() - timedelta(days=1), time.min)\n+    end = start + timedelta(days=1)\n+    return Order.objects.filter(created_at__gte=start, created_at__lt=end)"
                ),
            ),
            (
                "file-settings",
                "file",
                2,
                2,
                gold(
                    "settings/base.py: USE_TZ = True; TIME_ZONE = 'UTC'  # servers and the database run in UTC"
                ),
            ),
            (
                "hunk-schedule",
                "hunk",
                2,
                3,
                "src/reports/schedule.py @@ +1,2 @@\n+schedule.every().day.at('07:00', 'Europe/Berlin').do(send_daily_report)",
            ),
            ("c-question", "comment", 1, 30, "reviewer-f: do we also want weekly totals?"),
            (
                "ci",
                "ci",
                1,
                20,
                pytest_run(
                    "test_reports.py",
                    [f"test_report_{n}" for n in ("render", "email", "empty_day", "currency", "schedule")],
                ),
            ),
        ],
    ),
    review(
        "review-followup-thread",
        ["thread", "correction"],
        "Which of the reviewers' requests are still open?",
        [
            ("desc", "desc", 2, 0, "PR #701: retry failed webhook deliveries with backoff."),
            (
                "hunk-retry",
                "hunk",
                3,
                1,
                "src/webhooks/retry.py @@ +1,12 @@\n+@retry(wait=wait_exponential(multiplier=1, max=300), stop=stop_after_attempt(8))\n+def deliver(endpoint, payload):\n+    return httpx.post(endpoint.url, json=payload, timeout=10)",
            ),
            (
                "c-1",
                "comment",
                2,
                10,
                "reviewer-g: please add jitter, otherwise all retries hit the partner at the same second.",
            ),
            (
                "c-1-done",
                "comment",
                2,
                25,
                gold("author: added wait_random_exponential in 3f2a1c, jitter is in."),
            ),
            (
                "c-2",
                "comment",
                2,
                12,
                gold(
                    "reviewer-g: deliveries must be idempotent: send an Idempotency-Key header derived from the event id."
                ),
            ),
            (
                "c-3",
                "comment",
                2,
                14,
                gold("reviewer-h: we need a metric for exhausted retries so on-call notices dead endpoints."),
            ),
            (
                "c-3-reply",
                "comment",
                2,
                40,
                gold("author: metric will come in a follow-up PR, I opened WEB-88."),
            ),
            (
                "ci",
                "ci",
                1,
                50,
                pytest_run(
                    "test_webhooks.py",
                    [
                        f"test_webhook_{n}"
                        for n in (
                            "sign",
                            "deliver",
                            "retry",
                            "timeout",
                            "disable",
                            "replay",
                            "filters",
                            "batch",
                            "jitter",
                        )
                    ],
                ),
            ),
        ],
    ),
    review(
        "review-perf-n-plus-one",
        ["performance"],
        "Why did the endpoint get slower after this PR?",
        [
            ("desc", "desc", 2, 0, "PR #515: show the author's name in the comments list."),
            (
                "hunk-view",
                "hunk",
                3,
                1,
                gold(
                    "src/comments/views.py @@ -14,3 +14,3 @@\n-    comments = Comment.objects.filter(post=post)\n+    comments = Comment.objects.filter(post=post).order_by('-created_at')"
                ),
            ),
            (
                "hunk-template",
                "hunk",
                3,
                2,
                gold(
                    "templates/comments.html @@ -3,1 +3,1 @@\n-<li>{{ c.body }}</li>\n+<li><b>{{ c.author.display_name }}</b> {{ c.body }}</li>"
                ),
            ),
            (
                "ci-perf",
                "ci",
                2,
                25,
                gold("perf check: GET /posts/42/comments p95 38 ms -> 410 ms; queries per request 3 -> 203"),
            ),
            ("c-ok", "comment", 1, 40, "reviewer-i: nice UX improvement."),
            (
                "file-models",
                "file",
                1,
                3,
                "src/comments/models.py: class Comment: post = ForeignKey(Post); author = ForeignKey(User); body = TextField(); created_at = DateTimeField()",
            ),
            (
                "ci",
                "ci",
                1,
                20,
                pytest_run(
                    "test_comments.py",
                    [
                        f"test_comment_{n}"
                        for n in ("create", "edit", "delete", "list", "moderate", "spam", "markdown")
                    ],
                ),
            ),
        ],
    ),
    review(
        "review-config-default",
        ["config", "correction"],
        "Is the new default timeout safe?",
        [
            ("desc", "desc", 2, 0, "PR #302: make the payment gateway timeout configurable."),
            (
                "hunk-config",
                "hunk",
                3,
                1,
                "src/payments/config.py @@ -8,1 +8,1 @@\n-GATEWAY_TIMEOUT = 10\n+GATEWAY_TIMEOUT = int(os.environ.get('GATEWAY_TIMEOUT_MS', 30))",
            ),
            (
                "c-units",
                "comment",
                2,
                20,
                gold(
                    "reviewer-j: GATEWAY_TIMEOUT is passed to httpx as seconds, but the env var says MS. With the default of 30 we wait 30 seconds, three times longer than before."
                ),
            ),
            (
                "hunk-config-v2",
                "hunk",
                3,
                35,
                gold(
                    "src/payments/config.py @@ -8,1 +8,1 @@ (after review)\n-GATEWAY_TIMEOUT = 10\n+GATEWAY_TIMEOUT = int(os.environ.get('GATEWAY_TIMEOUT_MS', 10000)) / 1000"
                ),
            ),
            (
                "file-lb",
                "file",
                2,
                3,
                gold("deploy/ingress.yaml: nginx proxy_read_timeout 15s for /checkout"),
            ),
            (
                "ci",
                "ci",
                1,
                40,
                pytest_run(
                    "test_payments.py",
                    [f"test_gateway_{n}" for n in ("charge", "refund", "timeout", "retry", "3ds", "webhook")],
                ),
            ),
        ],
    ),
    review(
        "review-dependency-bump",
        ["dependencies"],
        "Can we merge the dependency bump?",
        [
            ("desc", "desc", 2, 0, "PR #1401 (bot): bump pydantic from 1.10.15 to 2.7.1."),
            (
                "hunk-req",
                "hunk",
                3,
                1,
                "requirements.txt @@ -12,1 +12,1 @@\n-pydantic==1.10.15\n+pydantic==2.7.1",
            ),
            (
                "ci-fail",
                "ci",
                3,
                20,
                gold(
                    "FAILED tests/test_schemas.py::test_order_schema - AttributeError: 'OrderSchema' object has no attribute 'dict'. Did you mean 'model_dump'?\nFAILED tests/test_schemas.py::test_config - PydanticUserError: `Config` class and `model_config` cannot both be used"
                ),
            ),
            (
                "file-schemas",
                "file",
                2,
                2,
                gold(
                    "src/schemas.py: 23 models use `class Config: orm_mode = True` and call `.dict()`; validators use @validator."
                ),
            ),
            (
                "ci-install",
                "ci",
                1,
                19,
                pip_install(
                    [
                        ("pydantic", "2.7.1"),
                        ("pydantic-core", "2.18.2"),
                        ("annotated-types", "0.6.0"),
                        ("typing-extensions", "4.11.0"),
                    ]
                ),
            ),
            ("c-bot", "comment", 1, 21, "dependabot: Compatibility score 41%."),
        ],
    ),
]
