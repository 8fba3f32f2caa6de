# ruff: noqa: E501  (hand-written case text reads best one message a line)
"""Hand-written RAG cases: retrieved chunks with retriever scores, near-duplicates and stale versions."""

from __future__ import annotations

from typing import Any

from _dsl import gold, items

SYSTEM = "Answer from the provided documents only and cite them as [doc id]. Say so when they do not contain the answer."


def rag(case_id: str, tags: list[str], question: str, docs: list[tuple[Any, ...]]) -> dict[str, Any]:
    """docs: (id, score, date, text); the system prompt and the question are pinned."""
    entries: list[dict[str, Any]] = [
        {"id": "system", "content": SYSTEM, "kind": "SystemPrompt", "pinned": True},
    ]
    for doc_id, score, date, text in docs:
        entries.append(
            {
                "id": doc_id,
                "content": text,
                "kind": "Document",
                "source": "Rag",
                "hint": score,
                "ts": f"{date}T00:00:00Z",
            }
        )
    entries.append(
        {
            "id": "question",
            "content": question,
            "kind": "Message",
            "pinned": True,
            "ts": "2025-03-14T09:00:00Z",
        }
    )
    return items(case_id, ["rag", *tags], question, entries)


CASES: list[dict[str, Any]] = [
    rag(
        "rag-parental-leave",
        ["policy", "stale"],
        "How many weeks of paid parental leave do secondary caregivers get?",
        [
            (
                "hr-2022-leave",
                0.91,
                "2022-01-10",
                "Parental leave policy (2022). Primary caregivers receive 16 weeks of fully paid leave. Secondary caregivers receive 4 weeks of fully paid leave, to be taken within 12 months of the birth or adoption.",
            ),
            (
                "hr-2024-leave",
                0.88,
                "2024-06-01",
                gold(
                    "Parental leave policy (revised June 2024). All parents, regardless of caregiver status, receive 20 weeks of fully paid leave. Leave may be split into up to three blocks within 18 months of the birth or adoption. This replaces the 2022 policy."
                ),
            ),
            (
                "hr-benefits",
                0.74,
                "2024-02-15",
                "Benefits overview. Health insurance covers employees and dependants from day one. The company matches pension contributions up to 5% of salary. Gym subsidy: 40 euros a month.",
            ),
            (
                "hr-sick",
                0.69,
                "2023-09-01",
                "Sick leave. Employees receive full pay for the first six weeks of illness per year; a doctor's note is required from the fourth day.",
            ),
            (
                "hr-handbook-intro",
                0.66,
                "2021-03-01",
                "Welcome to the employee handbook. This handbook explains how we work, our values, and the policies that apply to all employees in Germany, Austria and the Netherlands.",
            ),
            (
                "hr-remote",
                0.61,
                "2024-01-20",
                "Remote work policy. Employees may work remotely up to three days a week and from abroad up to 30 days a year, subject to manager approval.",
            ),
            (
                "hr-vacation",
                0.60,
                "2024-01-20",
                "Vacation. Full-time employees have 28 vacation days per year plus public holidays. Up to five unused days carry over to March 31 of the next year.",
            ),
        ],
    ),
    rag(
        "rag-api-pagination",
        ["docs", "multi-hop"],
        "How do I fetch all invoices for a customer with the v3 API?",
        [
            (
                "api-invoices-list",
                0.93,
                "2024-11-02",
                gold(
                    "GET /v3/invoices lists invoices. Filter with customer=<id>. Results are paginated: at most 100 per page; pass limit to choose a smaller page size."
                ),
            ),
            (
                "api-pagination",
                0.71,
                "2024-11-02",
                gold(
                    "Pagination (v3). Every list endpoint returns has_more and next_cursor. Pass starting_after=<next_cursor> to get the next page and stop when has_more is false. Offset-based paging (page=N) was removed in v3."
                ),
            ),
            (
                "api-v2-pagination",
                0.84,
                "2022-05-17",
                "Pagination (v2, deprecated). List endpoints accept page=N and per_page (max 50). The response includes total_pages.",
            ),
            (
                "api-auth",
                0.62,
                "2024-11-02",
                "Authentication. Send your secret key as a bearer token: Authorization: Bearer sk_live_... Test keys start with sk_test_.",
            ),
            (
                "api-rate-limits",
                0.58,
                "2024-11-02",
                "Rate limits. 100 read requests per second per account; list endpoints count as one request per page.",
            ),
            (
                "api-invoices-object",
                0.80,
                "2024-11-02",
                "The invoice object: id, customer, status (draft, open, paid, void, uncollectible), amount_due, currency, lines, created.",
            ),
            (
                "api-errors",
                0.52,
                "2024-11-02",
                "Errors use HTTP status codes: 400 invalid request, 401 bad key, 404 not found, 429 rate limited, 5xx server errors.",
            ),
        ],
    ),
    rag(
        "rag-duplicate-chunks",
        ["docs", "duplicates"],
        "What is the maximum upload size for attachments?",
        [
            (
                "kb-attachments-a",
                0.95,
                "2024-08-01",
                gold(
                    "Attachments. Each file can be up to 25 MB; a message can carry up to 10 attachments. Larger files should be shared as links."
                ),
            ),
            (
                "kb-attachments-b",
                0.95,
                "2024-08-01",
                "Attachments. Each file can be up to 25 MB; a message can carry up to 10 attachments. Larger files should be shared as links.",
            ),
            (
                "kb-attachments-c",
                0.94,
                "2024-08-01",
                "Attachments. Each file can be up to 25 MB; a message can carry up to 10 attachments. Larger files should be shared as links.",
            ),
            (
                "kb-enterprise",
                0.77,
                "2024-09-12",
                gold(
                    "Enterprise plan limits. Enterprise workspaces can raise the attachment limit to 100 MB per file in Admin > Files."
                ),
            ),
            (
                "kb-storage",
                0.70,
                "2024-02-01",
                "Storage. Free workspaces include 5 GB of file storage in total; paid plans include 100 GB per member.",
            ),
            (
                "kb-file-types",
                0.66,
                "2023-12-01",
                "Blocked file types. Executables (.exe, .bat, .msi) cannot be uploaded for security reasons.",
            ),
            (
                "kb-previews",
                0.59,
                "2023-05-01",
                "Previews. PDFs, images and Office documents get inline previews; other files show an icon and a download link.",
            ),
        ],
    ),
    rag(
        "rag-drug-interaction",
        ["medical", "multi-hop"],
        "Can a patient on warfarin take the new antibiotic in our formulary?",
        [
            (
                "form-clarithro",
                0.82,
                "2024-10-01",
                gold(
                    "Formulary update October 2024: clarithromycin 500 mg replaces azithromycin as first-line for community-acquired pneumonia in adults."
                ),
            ),
            (
                "int-warfarin-macrolides",
                0.64,
                "2023-04-11",
                gold(
                    "Interactions: warfarin with macrolides. Clarithromycin and erythromycin inhibit CYP3A4 and markedly raise INR; avoid or monitor INR within 3 to 5 days and reduce the warfarin dose. Azithromycin has a smaller effect."
                ),
            ),
            (
                "int-warfarin-general",
                0.79,
                "2022-01-15",
                "Warfarin overview. Warfarin is a vitamin K antagonist. Target INR is usually 2.0 to 3.0. Many drugs and foods alter its effect.",
            ),
            (
                "form-azithro",
                0.76,
                "2021-06-01",
                "Formulary 2021: azithromycin 500 mg once daily for three days is first-line for community-acquired pneumonia in adults.",
            ),
            (
                "guide-pneumonia",
                0.71,
                "2023-09-30",
                "Community-acquired pneumonia: assess severity with CURB-65; outpatients with score 0 to 1 can be treated orally.",
            ),
            (
                "int-statins",
                0.55,
                "2023-04-11",
                "Interactions: statins with CYP3A4 inhibitors raise the risk of myopathy; simvastatin should be paused during clarithromycin therapy.",
            ),
        ],
    ),
    rag(
        "rag-return-policy",
        ["support", "stale"],
        "A customer bought shoes 40 days ago. Can they still return them?",
        [
            (
                "ret-2023",
                0.90,
                "2023-01-01",
                "Returns. Items can be returned within 30 days of delivery in original condition.",
            ),
            (
                "ret-2025",
                0.86,
                "2025-01-15",
                gold(
                    "Returns (from 15 January 2025). Members of our loyalty program can return items within 60 days of delivery; everyone else within 30 days. Items must be unworn."
                ),
            ),
            (
                "cust-profile",
                0.40,
                "2025-03-10",
                gold(
                    "Customer profile: Maria Lindqvist, loyalty member since 2021, order #88412 delivered 2025-02-02 (running shoes, size 39)."
                ),
            ),
            (
                "ret-exchanges",
                0.72,
                "2024-05-01",
                "Exchanges. Size exchanges are free and do not restart the return window.",
            ),
            (
                "ship-times",
                0.63,
                "2024-05-01",
                "Shipping. Orders ship within two working days; delivery in Sweden takes one to three days.",
            ),
            (
                "ret-refunds",
                0.70,
                "2024-05-01",
                "Refunds are issued to the original payment method within five working days of receiving the return.",
            ),
        ],
    ),
    rag(
        "rag-incident-runbook",
        ["ops", "multi-hop"],
        "Redis memory is at 95% on cache-3. What do I do?",
        [
            (
                "rb-redis-memory",
                0.92,
                "2024-07-01",
                gold(
                    "Runbook: Redis memory high. 1) Check INFO memory and the eviction policy. 2) If maxmemory-policy is noeviction, switch to allkeys-lru only for cache clusters, never for the queue cluster. 3) Page the owning team if above 98%."
                ),
            ),
            (
                "inv-cache-3",
                0.45,
                "2025-02-20",
                gold(
                    "Inventory: cache-3 belongs to the sessions-queue cluster (owner: identity team); it is a queue, not a cache, despite its name."
                ),
            ),
            (
                "rb-redis-latency",
                0.77,
                "2024-07-01",
                "Runbook: Redis latency. Check SLOWLOG GET 20 and look for KEYS or large SMEMBERS calls.",
            ),
            (
                "rb-redis-failover",
                0.74,
                "2024-07-01",
                "Runbook: Redis failover. Sentinel promotes a replica after 30 seconds; clients reconnect automatically.",
            ),
            (
                "postmortem-2023",
                0.69,
                "2023-11-02",
                "Postmortem: in November 2023 an eviction on the jobs cluster dropped 40,000 queued emails. Queue clusters must use noeviction.",
            ),
            (
                "inv-cache-1",
                0.50,
                "2025-02-20",
                "Inventory: cache-1 and cache-2 belong to the page-cache cluster (owner: web team).",
            ),
        ],
    ),
    rag(
        "rag-contract-notice",
        ["legal", "multi-hop"],
        "By when must we give notice to leave the Hamburg office lease?",
        [
            (
                "lease-hamburg",
                0.88,
                "2021-04-01",
                gold(
                    "Lease agreement, Hamburg office, Große Elbstraße 42. Term: 1 May 2021 to 30 April 2026. The tenant may terminate at the end of the term with nine months' written notice."
                ),
            ),
            (
                "lease-amend-1",
                0.60,
                "2023-02-10",
                gold(
                    "First amendment to the Hamburg lease: the notice period in clause 4.2 is reduced to six months."
                ),
            ),
            (
                "lease-berlin",
                0.83,
                "2020-09-01",
                "Lease agreement, Berlin office. Term ends 31 August 2027; twelve months' written notice.",
            ),
            (
                "fac-hamburg",
                0.72,
                "2024-06-01",
                "Facilities: Hamburg office has 38 desks, average occupancy 41% in 2024.",
            ),
            (
                "legal-notices",
                0.65,
                "2022-01-01",
                "Notices under our leases must be sent by registered mail to the landlord's address in the contract.",
            ),
            (
                "lease-munich",
                0.79,
                "2022-03-01",
                "Lease agreement, Munich office. Term ends 28 February 2027; six months' written notice.",
            ),
        ],
    ),
    rag(
        "rag-product-spec",
        ["product", "duplicates"],
        "Does the X200 camera work in -20°C?",
        [
            (
                "spec-x200",
                0.90,
                "2024-03-01",
                gold(
                    "X200 technical specification. Operating temperature: -30°C to +50°C. Battery: 2,400 mAh, about 6 hours of recording at 20°C."
                ),
            ),
            (
                "spec-x200-copy",
                0.90,
                "2024-03-01",
                "X200 technical specification. Operating temperature: -30°C to +50°C. Battery: 2,400 mAh, about 6 hours of recording at 20°C.",
            ),
            (
                "faq-cold",
                0.74,
                "2024-12-01",
                gold(
                    "FAQ: Cold weather. Below -10°C battery life drops to about 40% of normal; keep a spare battery warm in an inner pocket."
                ),
            ),
            (
                "spec-x100",
                0.85,
                "2022-03-01",
                "X100 technical specification. Operating temperature: -10°C to +45°C. Battery: 1,800 mAh.",
            ),
            (
                "faq-water",
                0.66,
                "2024-12-01",
                "FAQ: Water. The X200 is IP68 rated: submersible to 10 metres for 30 minutes.",
            ),
            (
                "review-x200",
                0.70,
                "2024-05-20",
                "Review: the X200's stabilisation is excellent and low-light performance is the best in its class.",
            ),
        ],
    ),
    rag(
        "rag-onboarding",
        ["policy", "multi-hop"],
        "What do I need to do in my first week to get production database access?",
        [
            (
                "onb-week1",
                0.87,
                "2024-09-01",
                "First week checklist: collect your laptop, set up SSO and a hardware key, meet your buddy, and read the engineering handbook.",
            ),
            (
                "acc-prod-db",
                0.78,
                "2024-10-15",
                gold(
                    "Production database access requires: completed security training (module SEC-201), a hardware key registered in SSO, and approval from your manager in the access portal. Access is read-only for the first 90 days."
                ),
            ),
            (
                "sec-training",
                0.52,
                "2024-10-15",
                gold(
                    "Security training SEC-201 takes about 90 minutes and is available in the learning portal from your second day."
                ),
            ),
            (
                "onb-tools",
                0.75,
                "2024-09-01",
                "Tools: we use GitHub, Linear, Slack, Datadog and PagerDuty. Request licences in the access portal.",
            ),
            (
                "eng-handbook",
                0.70,
                "2023-01-01",
                "Engineering handbook: we review every change, deploy on green CI, and write postmortems without blame.",
            ),
            (
                "acc-staging",
                0.81,
                "2024-10-15",
                "Staging database access is granted automatically to all engineers on their first day.",
            ),
        ],
    ),
    rag(
        "rag-pricing-change",
        ["support", "stale", "duplicates"],
        "How much does the Team plan cost per seat?",
        [
            (
                "price-2023",
                0.92,
                "2023-02-01",
                "Pricing: Team plan 12 USD per seat per month, billed annually; 15 USD billed monthly.",
            ),
            (
                "price-2023-dup",
                0.92,
                "2023-02-01",
                "Pricing: Team plan 12 USD per seat per month, billed annually; 15 USD billed monthly.",
            ),
            (
                "price-2025",
                0.89,
                "2025-02-01",
                gold(
                    "Pricing update effective 1 February 2025: Team plan 14 USD per seat per month billed annually, 17 USD billed monthly. Existing customers keep their price until renewal."
                ),
            ),
            (
                "price-enterprise",
                0.70,
                "2025-02-01",
                "Enterprise plan pricing is custom; contact sales for a quote.",
            ),
            (
                "billing-faq",
                0.64,
                "2024-06-01",
                "Billing FAQ: seats are prorated when added mid-cycle; removing seats takes effect at renewal.",
            ),
            ("discounts", 0.58, "2024-06-01", "Non-profits and schools get 50% off the Team plan."),
        ],
    ),
    rag(
        "rag-research-summary",
        ["research", "multi-hop"],
        "Did the intervention reduce readmissions in patients over 75?",
        [
            (
                "trial-abstract",
                0.91,
                "2024-05-10",
                "Abstract: a nurse-led discharge programme reduced 30-day readmissions from 18.2% to 14.1% overall (n = 2,310).",
            ),
            (
                "trial-subgroups",
                0.57,
                "2024-05-10",
                gold(
                    "Table 3, subgroups: patients aged 75 and over (n = 612): 30-day readmission 21.0% control vs 20.3% intervention (difference not significant, p = 0.71)."
                ),
            ),
            (
                "trial-methods",
                0.73,
                "2024-05-10",
                "Methods: randomised at ward level across 14 hospitals; the primary outcome was 30-day all-cause readmission.",
            ),
            (
                "trial-discussion",
                0.66,
                "2024-05-10",
                gold(
                    "Discussion: the benefit was concentrated in patients under 75; older patients often had home-care needs the programme did not address."
                ),
            ),
            (
                "other-trial",
                0.80,
                "2021-08-01",
                "A 2021 telephone follow-up trial found no effect on readmissions in any age group.",
            ),
            (
                "editorial",
                0.62,
                "2024-06-01",
                "Editorial: discharge programmes work best when they include pharmacists and home visits.",
            ),
        ],
    ),
]
